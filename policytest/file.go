// Package policytest runs policy test files (`*_test.yaml`, docs/testing-policies.md):
// each file names a policy set and a list of cases, a case an event and its
// payload, or a whole AOS request, and the decision it expects. Cases are
// decided by the real core (package guardian), AOS requests through the AOS
// endpoint's handler, so a case gets the answer an agent would. `warden
// test` is this package on the command line.
package policytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/policy"
)

// File is one parsed test file.
type File struct {
	// Path is the file as found (relative to the path it was found under).
	Path string
	// Policies are the policy files and directories of the set, resolved
	// against the file's directory; directories are expanded to their
	// policy files, leaving test files out.
	Policies []string
	// Builtin puts the built-in pack in the set (default true).
	Builtin bool
	// DefaultDecision applies when no policy decides; Abstain means the
	// default (allow).
	DefaultDecision warden.Verdict
	// Cases are the file's tests, in file order.
	Cases []Case
}

// Case is one test: an event with its payload, or an AOS request (with
// requests answered before it, Setup), and what it expects.
type Case struct {
	Name string
	Line int
	// Event and Payload (a JSON object) make an event case.
	Event   string
	Payload []byte
	// ToolChanges are what the MCP gateway would have found comparing a
	// tools/list answer with the server's pins (event protocols/MCP only):
	// the event's Envelope.ToolChanges, policies' mcp.tool_changes.
	ToolChanges []warden.ToolChange
	// AOS is a whole AOS JSON-RPC request (JSON) for an AOS case; Setup
	// are requests the same handler answers first, e.g. the tool call a
	// result correlates with.
	AOS   []byte
	Setup [][]byte
	// Expect is what the decision must be.
	Expect Expect
}

// Expect is a case's expected outcome. Empty fields are not checked.
type Expect struct {
	// Decision is allow, deny, modify, ask or defer (an AOS case: allow,
	// deny or modify, what the agent is answered).
	Decision string `json:"decision"`
	// Policy is the deciding policy's id.
	Policy string `json:"policy,omitempty"`
	// Reason is a substring of the reason (an AOS case: of the answer's
	// message).
	Reason string `json:"reason,omitempty"`
	// OutputContains and OutputNotContains are substrings that the
	// modified output (the payload's JSON, or the AOS answer's
	// modifiedRequest) must and must not contain.
	OutputContains    []string `json:"output_contains,omitempty"`
	OutputNotContains []string `json:"output_not_contains,omitempty"`
	// Labels, when set (also to []), are exactly the session labels the
	// step sets (see CaseReport.Labels), in any order. Cases of one file
	// share their sessions' labels, in file order: a case sees the labels
	// the earlier taken steps of its session set.
	Labels *[]string `json:"labels,omitempty"`
}

// Find returns the test files under paths: a file is taken as it is, a
// directory is walked for *_test.yaml and *_test.yml files (hidden
// directories and node_modules left out). Files come in walk (lexical)
// order, each once. A path that yields no file is an error.
func Find(paths ...string) ([]string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var files []string
	seen := map[string]bool{}
	var errs []error
	for _, root := range paths {
		found := false
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if p == root || IsTestFile(p) {
				found = true
				if !seen[p] {
					seen[p] = true
					files = append(files, p)
				}
			}
			return nil
		})
		switch {
		case err != nil:
			errs = append(errs, err)
		case !found:
			errs = append(errs, fmt.Errorf("%s: no test files (*_test.yaml) here", root))
		}
	}
	return files, errors.Join(errs...)
}

// IsTestFile reports whether name is a policy test file's name
// (*_test.yaml or *_test.yml).
func IsTestFile(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	return strings.HasSuffix(base, "_test.yaml") || strings.HasSuffix(base, "_test.yml")
}

// ParseFile reads and parses the test file at path.
func ParseFile(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses a test file's content; path names it in errors and locates
// its relative policy paths. Every problem is reported, as a
// policy.ErrorList of file:line: message.
func Parse(path string, src []byte) (*File, error) {
	p := &parser{file: path}
	f := &File{Path: path, Builtin: true}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, policy.ErrorList{{File: path, Line: 1, Msg: "empty test file: it needs a tests: list"}}
		}
		return nil, conf.YAMLErrors(path, err)
	}
	var extra yaml.Node
	if dec.Decode(&extra) != io.EOF {
		p.errf(&extra, "a test file is one YAML document")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.errf(root, "a test file is a mapping (policies:, builtin:, tests:)")
		return nil, p.errs
	}
	var policiesSet, testsSet bool
	p.fields(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "policies":
			policiesSet = true
			f.Policies = p.policies(v)
		case "builtin":
			if v.Decode(&f.Builtin) != nil {
				p.errf(v, "builtin: want true or false")
			}
		case "defaultDecision":
			d, err := warden.ParseVerdict(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode || (d != warden.Allow && d != warden.Deny) {
				p.errf(v, "defaultDecision: want allow or deny")
			}
			f.DefaultDecision = d
		case "tests":
			testsSet = true
			f.Cases = p.cases(v)
		default:
			p.errf(k, "unknown field %q (want policies, builtin, defaultDecision, tests)", key)
		}
	})
	if !testsSet {
		p.errf(root, "no tests: list")
	}
	dir := filepath.Dir(path)
	if !policiesSet {
		f.Policies = policyFiles(dir, false)
	} else {
		var ps []string
		for _, rel := range f.Policies {
			if !filepath.IsAbs(rel) {
				rel = filepath.Join(dir, rel)
			}
			ps = append(ps, expand(rel)...)
		}
		f.Policies = ps
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return f, nil
}

// expand returns a policy path as the set loads it: a directory's policy
// files without its test files, or the path itself (a file, or a directory
// without policy files, which the loader then reports).
func expand(path string) []string {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return []string{path}
	}
	return policyFiles(path, true)
}

// policyFiles lists dir's *.yaml and *.yml files in name order, test files
// left out. With none, it returns dir itself when strict (an explicit
// `policies:` entry: the loader reports the empty directory), else nothing.
func policyFiles(dir string, strict bool) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") && !IsTestFile(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 && strict {
		return []string{dir}
	}
	return out
}
