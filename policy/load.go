package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/conf"
)

// Load reads and compiles the policies in paths: files, or directories whose
// *.yaml and *.yml files are read in name order (not recursively). A file holds
// one policy per YAML document. Every problem is reported: the error is an
// ErrorList of "file:line: message". No paths gives an empty set.
//
// Load does not check event names against the catalog and never adds the
// built-in pack: commands use LoadSet.
func Load(paths ...string) (*Set, error) {
	l := newLoader(osFS{})
	for _, p := range paths {
		l.path(p, filepath.Join)
	}
	return l.finish(Spec{Paths: paths})
}

// LoadFS is Load over fsys (e.g. an embed.FS); names are files or directories
// in fsys, and errors name them as given.
func LoadFS(fsys fs.FS, names ...string) (*Set, error) {
	l := newLoader(fsys)
	for _, n := range names {
		l.path(n, path.Join)
	}
	return l.finish(Spec{})
}

// osFS reads the host file system with paths as the user gave them.
type osFS struct{}

func (osFS) Open(name string) (fs.File, error)          { return os.Open(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) ReadFile(name string) ([]byte, error)       { return os.ReadFile(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }

type loader struct {
	fsys    fs.FS
	errs    ErrorList
	ps      []*Policy
	sources []string
	ids     map[string]*Policy
	// events, when not nil, are the known event names: an events entry
	// that matches none of them is an error.
	events []string
}

func newLoader(fsys fs.FS) *loader { return &loader{fsys: fsys, ids: map[string]*Policy{}} }

func (l *loader) finish(spec Spec) (*Set, error) {
	if len(l.errs) > 0 {
		// Report each file's errors in line order, files in load order.
		first := map[string]int{}
		for i, e := range l.errs {
			if _, ok := first[e.File]; !ok {
				first[e.File] = i
			}
		}
		sort.SliceStable(l.errs, func(i, j int) bool {
			a, b := l.errs[i], l.errs[j]
			if a.File != b.File {
				return first[a.File] < first[b.File]
			}
			return a.Line < b.Line
		})
		return nil, l.errs
	}
	s := newSet(l.ps, l.sources)
	s.spec = spec
	return s, nil
}

func (l *loader) path(p string, join func(...string) string) {
	fi, err := fs.Stat(l.fsys, p)
	if err != nil {
		l.errs.Add(p, 0, 0, "%s", pathErr(err))
		return
	}
	if !fi.IsDir() {
		l.file(p)
		return
	}
	ents, err := fs.ReadDir(l.fsys, p)
	if err != nil {
		l.errs.Add(p, 0, 0, "%s", pathErr(err))
		return
	}
	var names []string
	for _, e := range ents {
		ext := strings.ToLower(path.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") && !IsTestFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		// Fail closed: a directory emptied by a careless `rm` (or not yet
		// filled) must not silently drop every policy it held.
		l.errs.Add(p, 0, 0, "no policy files (*.yaml, *.yml) in this directory")
		return
	}
	sort.Strings(names)
	for _, n := range names {
		l.file(join(p, n))
	}
}

// IsTestFile reports whether name is a policy test file (*_test.yaml,
// *_test.yml: `warden test`, docs/testing-policies.md). A directory's test files sit
// beside its policies and are not policies: loading a directory skips
// them (a file named explicitly is loaded as given).
func IsTestFile(name string) bool {
	base := strings.ToLower(path.Base(name))
	return strings.HasSuffix(base, "_test.yaml") || strings.HasSuffix(base, "_test.yml")
}

func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

func (l *loader) file(name string) {
	data, err := fs.ReadFile(l.fsys, name)
	if err != nil {
		l.errs.Add(name, 0, 0, "%s", pathErr(err))
		return
	}
	l.sources = append(l.sources, name)
	if len(bytes.TrimSpace(data)) == 0 {
		l.errs.Add(name, 1, 1, "%s", errEmptyFile)
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	docs := 0 // non-empty documents
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			if docs == 0 {
				// Fail closed: `: > file` is the first step of a non-atomic
				// save; loading it as "no policies" would drop them all.
				l.errs.Add(name, 1, 1, "%s", errEmptyFile)
			}
			return
		}
		if err != nil {
			l.errs = append(l.errs, conf.YAMLErrors(name, err)...)
			return
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // empty document
		}
		docs++
		if p := l.document(name, root); p != nil {
			l.ps = append(l.ps, p)
		}
	}
}

// errEmptyFile is the error of a file without a policy.
const errEmptyFile = "no policy in this file (it is empty or holds only comments): a policy file must define at least one policy"

// document compiles one policy; it returns nil after recording its errors.
func (l *loader) document(file string, root *yaml.Node) *Policy {
	if root.Kind != yaml.MappingNode {
		l.errs.Add(file, root.Line, root.Column, "a policy must be a mapping of fields (id, version, events, ...)")
		return nil
	}
	n0 := len(l.errs)
	p := &Policy{File: file, Line: root.Line}
	seen := map[string]*yaml.Node{}
	var whenN, reasonExprN, decisionN, modifyN, labelN *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if prev := seen[k.Value]; prev != nil {
			l.errs.Add(file, k.Line, k.Column, "duplicate field %q (first at line %d)", k.Value, prev.Line)
			continue
		}
		seen[k.Value] = k
		if k.Value != "modify" && k.Value != "events" && v.Kind != yaml.ScalarNode {
			if _, known := fieldNames[k.Value]; known {
				l.errs.Add(file, k.Line, k.Column, "%s must be a %s", k.Value, fieldNames[k.Value])
				continue
			}
		}
		switch k.Value {
		case "id":
			p.ID = strings.TrimSpace(v.Value)
			if p.ID == "" || strings.ContainsAny(p.ID, " \t\n") {
				l.errs.Add(file, k.Line, k.Column, "id must be a non-empty word, not %q", v.Value)
			} else if prev := l.ids[p.ID]; prev != nil && prev.pack {
				l.errs.Add(file, k.Line, k.Column, "policy id %q is already defined by the built-in pack (%s:%d): rename this policy, or leave the pack out with --builtin=false",
					p.ID, prev.File, prev.Line)
			} else if prev != nil {
				l.errs.Add(file, k.Line, k.Column, "duplicate policy id %q (first defined at %s:%d)", p.ID, prev.File, prev.Line)
			} else {
				l.ids[p.ID] = p
			}
		case "version":
			p.Version = v.Value
			if v.Tag == "!!null" || v.Value == "" || v.Tag == "!!bool" {
				l.errs.Add(file, k.Line, k.Column, "version must be a non-empty string")
			}
		case "description":
			p.Description = v.Value
		case "events":
			evs, ok := stringList(v)
			if !ok || len(evs) == 0 {
				l.errs.Add(file, k.Line, k.Column, "events must be a non-empty list of event names or globs")
			}
			p.Events = evs
			if ok && l.events != nil {
				for _, n := range eventNodes(v) {
					if err := CheckEvent(n.Value, l.events); err != nil {
						l.errs.Add(file, n.Line, n.Column, "events: %v", err)
					}
				}
			}
		case "when":
			p.When, whenN = v.Value, k
		case "decision":
			d, err := warden.ParseVerdict(v.Value)
			if v.Value == warden.Defer.String() {
				// defer: the step waits, like ask, for a resolution
				// (an approval); on ACS it is the defer disposition.
				d, err = warden.Defer, nil
			}
			if err != nil {
				l.errs.Add(file, k.Line, k.Column, "%v", err)
			}
			p.Decision, decisionN = d, k
		case "reason":
			p.Reason = v.Value
		case "reasonExpr":
			p.ReasonExpr, reasonExprN = v.Value, k
		case "modify":
			modifyN = k
			p.ops = parseOps(file, v, &l.errs)
		case "label":
			labelN = k
			p.Labels = parseLabels(file, v, &l.errs)
		case "mode":
			switch v.Value {
			case "enforce":
				p.Mode = warden.Enforce
			case "audit":
				p.Mode = warden.Audit
			default:
				l.errs.Add(file, k.Line, k.Column, "unknown mode %q (want enforce or audit)", v.Value)
			}
		case "priority":
			n, err := strconv.Atoi(v.Value)
			if err != nil || v.Tag != "!!int" {
				l.errs.Add(file, k.Line, k.Column, "priority must be an integer, not %q", v.Value)
			}
			p.Priority = n
		default:
			l.errs.Add(file, k.Line, k.Column, "unknown field %q", k.Value)
		}
	}
	for _, req := range []string{"id", "version", "events", "decision"} {
		if req == "decision" && labelN != nil {
			continue // a policy that only labels the session decides nothing
		}
		if seen[req] == nil {
			l.errs.Add(file, root.Line, root.Column, "missing %s%s", req, policyLabel(p))
		}
	}
	switch {
	case decisionN == nil && modifyN != nil:
		l.errs.Add(file, modifyN.Line, modifyN.Column, "modify is only valid with decision: modify")
	case decisionN == nil:
	case p.Decision == warden.Modify && modifyN == nil:
		l.errs.Add(file, decisionN.Line, decisionN.Column, "decision modify needs a modify list")
	case p.Decision != warden.Modify && p.Decision != warden.Abstain && modifyN != nil:
		l.errs.Add(file, modifyN.Line, modifyN.Column, "modify is only valid with decision: modify (decision is %s)", p.Decision)
	}
	if p.Reason != "" && p.ReasonExpr != "" {
		l.errs.Add(file, reasonExprN.Line, reasonExprN.Column, "reason and reasonExpr are exclusive")
	}
	if whenN != nil && strings.TrimSpace(p.When) != "" {
		prg, msgs := compile(p.When, cel.BoolType)
		for _, m := range msgs {
			l.errs.Add(file, whenN.Line, whenN.Column, "when: %s", m)
		}
		p.when = prg
	}
	if reasonExprN != nil {
		prg, msgs := compile(p.ReasonExpr, cel.StringType)
		for _, m := range msgs {
			l.errs.Add(file, reasonExprN.Line, reasonExprN.Column, "reasonExpr: %s", m)
		}
		p.reasonExpr = prg
	}
	if len(l.errs) > n0 {
		return nil
	}
	if p.Reason == "" && p.ReasonExpr == "" {
		p.Reason = defaultReason(p)
	}
	p.canon = canonical(root)
	return p
}

// eventNodes returns the scalar nodes of an events value (a name or a list).
func eventNodes(v *yaml.Node) []*yaml.Node {
	if v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}

// fieldNames are the scalar fields and what they hold, for type errors.
var fieldNames = map[string]string{
	"id": "string", "version": "string", "description": "string", "when": "CEL expression (string)",
	"decision": "string (allow, deny, modify, ask or defer)", "reason": "string",
	"reasonExpr": "CEL expression (string)", "mode": "string (enforce or audit)", "priority": "integer",
}

func policyLabel(p *Policy) string {
	if p.ID != "" {
		return fmt.Sprintf(" (policy %s)", p.ID)
	}
	return ""
}

func defaultReason(p *Policy) string {
	if p.Decision == warden.Abstain && len(p.Labels) > 0 { // its result says what it did
		return fmt.Sprintf("policy %s labels the session: %s", p.ID, strings.Join(p.Labels, ", "))
	}
	if p.Description != "" {
		return strings.TrimSpace(p.Description)
	}
	return fmt.Sprintf("policy %s: %s", p.ID, p.Decision)
}
