package warden_test

// The shape of the codebase, checked (docs/architecture.md): what the root
// package exports, what the decision core may import, where JSON-RPC is
// framed, where each bound is defined, and what comments may cite.

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/server"
)

const module = "github.com/wardenhq/warden"

// goFiles parses every non-test Go file of the repository (not
// node_modules, testdata or hidden directories), keyed by path relative to
// the root.
func goFiles(t *testing.T, mode parser.Mode) (map[string]*ast.File, *token.FileSet) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(path)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, fset
}

// TestRootExportsVocabulary: the root package holds what every package
// speaks — events, outcomes, the chain, principals, reason codes — and
// nothing else. Counted as `go doc -short .` lists it: each const or var
// group, function and type once, and each constructor or typed const group
// listed under its type once. 121 before the split into audit, approval,
// labels, acsstate, agbom, fleet/registry and pipeline.
func TestRootExportsVocabulary(t *testing.T) {
	const most = 40
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p, err := doc.NewFromFiles(fset, filesOf(pkgs["warden"]), module)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	add := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, kind+" "+v.Names[0])
		}
	}
	add("const", p.Consts)
	add("var", p.Vars)
	for _, f := range p.Funcs {
		names = append(names, "func "+f.Name)
	}
	for _, ty := range p.Types {
		names = append(names, "type "+ty.Name)
		add("const", ty.Consts)
		add("var", ty.Vars)
		for _, f := range ty.Funcs {
			names = append(names, "func "+f.Name)
		}
	}
	if len(names) > most {
		t.Errorf("the root package exports %d names (at most %d):\n%s", len(names), most, strings.Join(names, "\n"))
	}
}

func filesOf(p *ast.Package) []*ast.File {
	var fs []*ast.File
	keys := make([]string, 0, len(p.Files))
	for k := range p.Files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fs = append(fs, p.Files[k])
	}
	return fs
}

// goList runs `go list -deps` on pkgs and returns the module's packages
// among the dependencies, relative to the module ("" for the root).
func goList(t *testing.T, pkgs ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	var deps []string
	for _, l := range strings.Fields(string(out)) {
		if l == module {
			deps = append(deps, "")
		} else if rel, ok := strings.CutPrefix(l, module+"/"); ok {
			deps = append(deps, rel)
		}
	}
	return deps
}

// TestCoreImportsNoSurface: the decision core — the pipeline, the guardian
// that runs one per tenant, the feature packages it is built from, the
// policy engine — imports no surface. Surfaces import the core.
func TestCoreImportsNoSurface(t *testing.T) {
	surfaces := []string{"aos", "acs", "mcpgate", "a2agate", "server", "console", "hostadapter"}
	core := []string{".", "./pipeline", "./guardian", "./audit", "./approval", "./labels", "./acsstate", "./agbom", "./fleet/registry", "./policy", "./catalog"}
	for _, c := range core {
		for _, d := range goList(t, c) {
			if slices.Contains(surfaces, d) {
				t.Errorf("%s depends on the surface %s", c, d)
			}
		}
	}
}

// TestOneJSONRPCFraming: package jsonrpc frames JSON-RPC for every
// surface: no other package declares the envelope (a field tagged
// `json:"jsonrpc"`) or writes JSON responses with a writeJSON of its own,
// and the four JSON-RPC surfaces use jsonrpc.
func TestOneJSONRPCFraming(t *testing.T) {
	files, _ := goFiles(t, 0)
	for path, f := range files {
		dir := filepath.Dir(path)
		if dir == "jsonrpc" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if n.Tag != nil {
					tag, _ := strconv.Unquote(n.Tag.Value)
					if strings.Contains(tag, `json:"jsonrpc"`) {
						t.Errorf("%s declares a JSON-RPC envelope field (%s); package jsonrpc frames JSON-RPC", path, n.Tag.Value)
					}
				}
			case *ast.FuncDecl:
				if n.Recv == nil && strings.EqualFold(n.Name.Name, "writeJSON") {
					t.Errorf("%s declares %s; use the one in package jsonrpc", path, n.Name.Name)
				}
			}
			return true
		})
	}
	for _, s := range []string{"aos", "acs", "mcpgate", "a2agate"} {
		if !slices.Contains(goList(t, "./"+s), "jsonrpc") {
			t.Errorf("%s does not use package jsonrpc", s)
		}
	}
}

// boundName is the name of a constant that bounds something or gives a
// default.
var boundName = regexp.MustCompile(`^(?i:max|min|default)`)

// TestBoundsDefinedOnce: a bound (a constant named max…, min… or
// default…) is defined in one package; every other package refers to
// it. Two packages declaring the same name with the same value are one
// bound written twice. The outbound clients' default timeouts are each
// their own bound (a webhook, a hook, the stream publisher, the AOS
// client, a notifier, a host adapter), equal by choice, not by rule.
func TestBoundsDefinedOnce(t *testing.T) {
	ownDefault := map[string]bool{"defaulttimeout": true}
	files, fset := goFiles(t, 0)
	type def struct{ pkg, at string }
	seen := map[string][]def{}
	for path, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !boundName.MatchString(n.Name) || i >= len(vs.Values) || ownDefault[strings.ToLower(n.Name)] {
						continue
					}
					val := exprString(fset, vs.Values[i])
					k := strings.ToLower(n.Name) + " = " + val
					seen[k] = append(seen[k], def{filepath.Dir(path), fset.Position(n.Pos()).String()})
				}
			}
		}
	}
	for k, ds := range seen {
		pkgs := map[string]bool{}
		var at []string
		for _, d := range ds {
			pkgs[d.pkg] = true
			at = append(at, d.at)
		}
		if len(pkgs) > 1 {
			slices.Sort(at)
			t.Errorf("the bound %s is defined %d times: %s", k, len(ds), strings.Join(at, ", "))
		}
	}
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	src, err := os.ReadFile(fset.File(e.Pos()).Name())
	if err != nil {
		return ""
	}
	return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
}

// TestCommentsCiteTheRepository: comments in the code speak to a reader
// of this repository: they link docs/, not the project's contract or its
// issue tracker, which that reader does not have.
func TestCommentsCiteTheRepository(t *testing.T) {
	cite := regexp.MustCompile(`CONTRACT(\.md)? §|\b[Ii]ssues? \d+\b`)
	files, fset := goFiles(t, parser.ParseComments)
	for path, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if m := cite.FindString(c.Text); m != "" {
					t.Errorf("%s: comment cites %q", fset.Position(c.Pos()), m)
				}
			}
		}
		_ = path
	}
}

// TestSurfacesAreRoutes: a surface comes into the server only as a route
// (server.Options.Routes: its pattern, handler and scope, from its
// package's route constructor), never as an http.Handler field of
// server.Options, so adding a surface touches its package and one line of
// cmd/warden's table (docs/architecture.md). The server's own /readyz
// takes its checks, a *fleet.Readiness.
func TestSurfacesAreRoutes(t *testing.T) {
	handler := reflect.TypeFor[http.Handler]()
	opts := reflect.TypeFor[server.Options]()
	own := map[reflect.Type]bool{reflect.TypeFor[*fleet.Readiness](): true}
	for i := range opts.NumField() {
		f := opts.Field(i)
		if f.Type == handler || f.Type.Implements(handler) && !own[f.Type] {
			t.Errorf("server.Options.%s is an http.Handler (%s): a surface comes in as a server.Route in Options.Routes", f.Name, f.Type)
		}
	}
	if f, ok := opts.FieldByName("Routes"); !ok || f.Type != reflect.TypeFor[[]server.Route]() {
		t.Errorf("server.Options has no Routes []server.Route")
	}
}

// TestOneRelay: package relay calls the upstreams of the two gateways that
// forward JSON-RPC over HTTP and relays their SSE streams
// (docs/architecture.md). mcpgate and a2agate import it, and neither
// builds a client of its own (an http.Transport), an upstream request
// (http.NewRequest…), a call's deadline (time.AfterFunc) or the trace
// context of a call (internal/traceparent), nor reads or writes an event
// stream itself (package sse).
func TestOneRelay(t *testing.T) {
	const relayPkg = module + "/relay"
	banned := map[string]string{
		module + "/sse":                  "reads or writes the event stream itself",
		module + "/internal/traceparent": "injects the trace context itself",
	}
	bannedUse := map[string]map[string]bool{
		"net/http": {"NewRequest": true, "NewRequestWithContext": true, "Transport": true},
		"time":     {"AfterFunc": true},
	}
	files, fset := goFiles(t, 0)
	uses := map[string]bool{}
	for path, f := range files {
		dir := filepath.Dir(path)
		if dir != "mcpgate" && dir != "a2agate" {
			continue
		}
		local := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			local[name] = p
			if p == relayPkg {
				uses[dir] = true
			}
			if why, ok := banned[p]; ok {
				t.Errorf("%s imports %s: it %s; package relay does", path, p, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && bannedUse[local[x.Name]][sel.Sel.Name] {
				t.Errorf("%s: %s.%s: the upstream call is package relay's (relay.Client, relay.Start, Call.Request)", fset.Position(sel.Pos()), local[x.Name], sel.Sel.Name)
			}
			return true
		})
	}
	for _, g := range []string{"mcpgate", "a2agate"} {
		if !uses[g] {
			t.Errorf("%s does not use package relay", g)
		}
	}
}

// TestConfigSectionsOwnedByFeatures: config aggregates; the features own
// their sections. A section is a typed struct of its feature's package,
// decoded by conf (strict keys, bounds in tags, Validate at the field's
// line) — config/ walks YAML nodes by hand only at the top level and where
// a key itself is checked (a tenant's name, a null path). Before: 13 files
// of config/ walked yaml.Node by hand, and every section type was config's.
func TestConfigSectionsOwnedByFeatures(t *testing.T) {
	files, _ := goFiles(t, parser.ParseComments)
	var walking []string
	for path, f := range files {
		if !strings.HasPrefix(path, "config/") {
			continue
		}
		hand := false
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Content" || sel.Sel.Name == "MappingNode") {
				hand = true
			}
			return !hand
		})
		if hand {
			walking = append(walking, path)
		}
	}
	slices.Sort(walking)
	if len(walking) > 3 {
		t.Errorf("%d files of config/ walk YAML nodes by hand (at most 3: the top level, tenant names, null paths): %v", len(walking), walking)
	}
	// The sections that belong to a feature have that feature's type.
	owned := map[string]string{
		"MCP": "relay", "A2A": "relay", "TLS": "auth", "Auth": "auth", "Origins": "auth",
		"Trace": "audit", "ACS": "acsstate", "OTel": "otelx", "Stream": "stream",
		"Instance": "fleet/registry", "Gateways": "internal/sealid",
	}
	ct := reflect.TypeOf(config.Config{})
	for field, pkg := range owned {
		f, ok := ct.FieldByName(field)
		if !ok {
			t.Errorf("config.Config has no field %s", field)
			continue
		}
		if got := f.Type.PkgPath(); got != module+"/"+pkg {
			t.Errorf("config.Config.%s is a %s (package %s), want a type of %s", field, f.Type, got, pkg)
		}
	}
}

// layers are the package layers of docs/architecture.md, lowest first. A
// package imports only from its own layer or the layers below it.
var layers = []struct {
	name string
	pkgs []string
}{
	{"vocabulary", []string{"", "internal/jsonappend"}},
	{"wire", []string{"conf", "jsonrpc", "jsonstrict", "sse", "relay", "surface", "internal/canon", "sigkey", "seal", "seal/sealtest", "auth",
		"webhook", "command", "internal/glob", "internal/jsonpointer", "internal/keyfile", "internal/noredirect",
		"internal/payload", "internal/sealid", "internal/traceparent", "internal/acsschema", "internal/acsclient",
		"internal/tracehash", "internal/seglog", "internal/jsontest", "internal/handlertest", "internal/sharedtest", "internal/buftest",
		"internal/pgtest"}},
	{"features", []string{"audit", "approval", "labels", "acsstate", "fleet/registry", "labels/labelstest"}},
	{"core", []string{"catalog", "detect", "redact", "unseal", "policy", "hooks", "pipeline", "agbom", "aosclient"}},
	{"backends", []string{"backend", "internal/tracesql", "sqlite", "postgres", "storetest", "approval/approvaltest", "internal/tracegen"}},
	{"outputs", []string{"otelx", "ocsf", "stats", "stream", "fleet", "notify"}},
	{"assembly", []string{"config", "guardian", "replay"}},
	{"surfaces", []string{"aos", "acs", "mcpgate", "a2agate", "hostadapter", "server", "console", "policytest"}},
	{"commands", []string{"cmd/warden", "internal/injtrain", "internal/injdata", "bench", "bench/floor", "bench/loadgen"}},
}

// TestLayers: every package has a layer, and imports only from its own
// layer or below (the one exception: the root names the labels that
// provenance sets, from labels).
func TestLayers(t *testing.T) {
	rank := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			rank[p] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := rel(f[0])
		if strings.HasPrefix(p, "e2e") || strings.Contains(p, "embedtest") || strings.Contains(p, "testdata") {
			continue
		}
		r, ok := rank[p]
		if !ok {
			t.Errorf("package %q has no layer: place it in arch_test.go's layers and docs/architecture.md", p)
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			q := rel(imp)
			if p == "" && q == "labels" {
				continue
			}
			if rq, ok := rank[q]; ok && rq > r {
				t.Errorf("%q (%s) imports %q (%s), a layer above it", p, layers[r].name, q, layers[rq].name)
			}
		}
	}
}

// TestDecideMeansOneThing: a method named Decide is a warden.Handler's
// (an opinion: Decision) or a warden.Core's (the decision: Outcome), both
// of an Event; what does something else says so (Chain.Run,
// approval.Manager.Resolve, replay.Replayer.Replay, hostadapter's Check).
// Before: 13 methods named Decide with six signatures.
func TestDecideMeansOneThing(t *testing.T) {
	files, fset := goFiles(t, 0)
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Decide" {
				continue
			}
			sig := types(fset, fn.Type.Params) + " -> " + types(fset, fn.Type.Results)
			switch strings.ReplaceAll(sig, "warden.", "") {
			case "context.Context, *Event -> Decision, error", "context.Context, *Event -> Outcome, error":
			default:
				t.Errorf("%s: Decide(%s): a Decide is a Handler's or a Core's; name this method for what it does", fset.Position(fn.Pos()), sig)
			}
		}
	}
}

// types prints a field list's types, comma-separated.
func types(fset *token.FileSet, fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var out []string
	for _, f := range fl.List {
		n := max(1, len(f.Names))
		for range n {
			out = append(out, exprString(fset, f.Type))
		}
	}
	return strings.Join(out, ", ")
}
