package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// names stands in for the hook catalog (hooks and cmd/warden pass the real one).
var names = []string{"steps/toolCallRequest", "steps/message", "protocols/MCP", "tool.pre_call", "tool.post_call"}

func TestLoadEmptyFile(t *testing.T) {
	for _, src := range []string{"", "\n\n", "   \t\n", "# only a comment\n", "---\n# c\n---\n", "~\n"} {
		p := writeFile(t, t.TempDir(), "p.yaml", src)
		for name, load := range map[string]func() (*Set, error){
			"Load":    func() (*Set, error) { return Load(p) },
			"LoadSet": func() (*Set, error) { return LoadSet(Spec{Builtin: true, Paths: []string{p}}) },
		} {
			s, err := load()
			want := p + ":1: no policy in this file (it is empty or holds only comments): a policy file must define at least one policy"
			if err == nil || err.Error() != want {
				t.Errorf("%s %q = %v, %v\nwant %s", name, src, s, err, want)
			}
		}
	}
	// An empty document beside a policy is fine.
	if _, err := Load(writeFile(t, t.TempDir(), "p.yaml", "---\n"+fmt.Sprintf(onePolicy, "a"))); err != nil {
		t.Error(err)
	}
}

func TestLoadEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "notes.txt", "x")
	_, err := LoadSet(Spec{Paths: []string{dir}})
	if err == nil || err.Error() != dir+": no policy files (*.yaml, *.yml) in this directory" {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadUnknownEvent(t *testing.T) {
	p := writeFile(t, t.TempDir(), "p.yaml", `id: a
version: "1"
events:
  - steps/toolCallRequest
  - tool.precall
  - "steps/*"
  - "stepz/*"
decision: deny
---
id: b
version: "1"
events: protocols/mcp
decision: deny
`)
	_, err := LoadSet(Spec{Paths: []string{p}, Events: names})
	want := []string{
		p + `:5: events: "tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`,
		p + `:7: events: "stepz/*" matches no event in the catalog (did you mean "steps/message"?)`,
		p + `:12: events: "protocols/mcp" matches no event in the catalog (did you mean "protocols/MCP"?)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("err =\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	// Without a catalog (Load, or Spec.Events nil) names are not checked.
	if _, err := LoadSet(Spec{Paths: []string{p}}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckEvent(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"tool.pre_call", ""},
		{"tool.*", ""},
		{"*", ""},
		{"tool.precall", `"tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`},
		{"tool.post_cal", `"tool.post_cal" matches no event in the catalog (did you mean "tool.post_call"?)`},
		{"steps/Message", `"steps/Message" matches no event in the catalog (did you mean "steps/message"?)`},
	}
	for _, tc := range tests {
		err := CheckEvent(tc.pattern, names)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("CheckEvent(%q) = %v, want %q", tc.pattern, err, tc.want)
		}
	}
}

func TestLoadSetBuiltinPlusPaths(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mine.yaml", "id: mine\nversion: \"1\"\nevents: [tool.pre_call]\ndecision: deny\npriority: -5\n")
	pack, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSet(Spec{Builtin: true, Paths: []string{dir}, Events: names})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != pack.Len()+1 || s.Get("mine") == nil || s.Get("deny-secrets-in-tool-calls") == nil {
		t.Fatalf("set = %d policies, want the pack (%d) and mine", s.Len(), pack.Len())
	}
	if s.Policies()[0].ID != "mine" {
		t.Errorf("first = %s, want mine (priority -5)", s.Policies()[0].ID)
	}
	// The pack's shared policies are not reordered by another set.
	if pack.Policies()[0].rank != 0 || pack.Get("deny-secrets-in-tool-calls") == s.Get("deny-secrets-in-tool-calls") {
		t.Error("LoadSet changed the pack's policies")
	}
	if sp := s.Spec(); !sp.Builtin || len(sp.Paths) != 1 || sp.String() != "the built-in pack + "+dir {
		t.Errorf("Spec = %+v (%s)", sp, sp)
	}
	s, err = LoadSet(Spec{Paths: []string{dir}})
	if err != nil || s.Len() != 1 {
		t.Fatalf("--builtin=false: %v, %d policies", err, s.Len())
	}
	s, err = LoadSet(Spec{Builtin: true})
	if err != nil || s.Len() != pack.Len() || s.Revision() != pack.Revision() {
		t.Fatalf("pack alone: %v, %d policies", err, s.Len())
	}
}

func TestLoadSetIDInPackAndFile(t *testing.T) {
	p := writeFile(t, t.TempDir(), "mine.yaml", "# my version\nid: deny-secrets-in-tool-calls\nversion: \"9\"\nevents: [tool.pre_call]\ndecision: deny\n")
	_, err := LoadSet(Spec{Builtin: true, Paths: []string{p}})
	want := p + `:2: policy id "deny-secrets-in-tool-calls" is already defined by the built-in pack (pack/10-secrets.yaml:4): rename this policy, or leave the pack out with --builtin=false`
	var el ErrorList
	if err == nil || err.Error() != want || !errors.As(err, &el) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if _, err := LoadSet(Spec{Paths: []string{p}}); err != nil {
		t.Fatalf("--builtin=false: %v", err)
	}
}

func TestRevision(t *testing.T) {
	a := "id: a\nversion: \"1\"\nevents: [e]\nwhen: 'tool.name == \"x\"'\ndecision: deny\n"
	b := "id: b\nversion: \"1\"\nevents: [e, f]\ndecision: allow\n"
	d1, d2 := t.TempDir(), t.TempDir()
	pa := writeFile(t, d1, "1.yaml", a)
	pb := writeFile(t, d1, "2.yaml", b)
	// The same policies in other files, other order, other layout and comments.
	writeFile(t, d2, "1.yaml", "# b first\nevents:\n  - e\n  - f\ndecision: allow\nid: b\nversion: '1'\n")
	writeFile(t, d2, "2.yaml", a)
	s1, err := Load(pa, pb)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Load(d2)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := Load(pb, pa)
	if err != nil {
		t.Fatal(err)
	}
	r := s1.Revision()
	if len(r) != 64 || strings.Trim(r, "0123456789abcdef") != "" {
		t.Fatalf("Revision = %q, want 64 hex digits", r)
	}
	if s2.Revision() != r || s3.Revision() != r {
		t.Errorf("revisions differ with load order or layout: %s %s %s", r, s2.Revision(), s3.Revision())
	}
	// A fixed value, the same in every process and build: sha256 over each
	// policy, by id, as an 8-byte little-endian length and its JSON.
	const golden = "d3e4e3b44d34aa385339293080f775a921ec503cd39e57da7e91d947bb045e05"
	if r != golden {
		t.Errorf("Revision = %s, want %s", r, golden)
	}
	for name, src := range map[string]string{
		"condition": strings.Replace(a, `"x"`, `"y"`, 1),
		"version":   strings.Replace(a, `"1"`, `"2"`, 1),
		"decision":  strings.Replace(a, "deny", "allow", 1),
		"events":    strings.Replace(a, "[e]", "[e, g]", 1),
		"priority":  a + "priority: 1\n",
	} {
		writeFile(t, d1, "1.yaml", src)
		s, err := Load(pa, pb)
		if err != nil {
			t.Fatal(err)
		}
		if s.Revision() == r {
			t.Errorf("changing the %s did not change the revision", name)
		}
	}
	if err := os.Remove(filepath.Join(d1, "1.yaml")); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(pb); err != nil || s.Revision() == r {
		t.Errorf("removing a policy did not change the revision (%v)", err)
	}
	if NewEngine(nil, Options{}).Set().Revision() == "" {
		t.Error("the empty set has no revision")
	}
}
