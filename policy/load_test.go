package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wardenhq/warden"
)

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // "line: message", the file name is prefixed
	}{
		{"missing id", "version: \"1\"\nevents: [a]\ndecision: allow\n",
			[]string{"1: missing id"}},
		{"missing id second document", "id: a\nversion: \"1\"\nevents: [a]\ndecision: allow\n---\n# comment\nversion: \"1\"\nevents: [a]\ndecision: allow\n",
			[]string{"7: missing id"}},
		{"missing version and events", "id: a\ndecision: allow\n",
			[]string{"1: missing version (policy a)", "1: missing events (policy a)"}},
		{"bad decision", "id: a\nversion: \"1\"\nevents: [a]\ndecision: block\n",
			[]string{`4: unknown decision "block" (want allow, deny, modify or ask)`}},
		{"missing decision", "id: a\nversion: \"1\"\nevents: [a]\n",
			[]string{"1: missing decision (policy a)"}},
		{"unknown key", "id: a\nversion: \"1\"\nevents: [a]\ndecision: allow\nwhen_: true\n",
			[]string{`5: unknown field "when_"`}},
		{"duplicate key", "id: a\nversion: \"1\"\nevents: [a]\ndecision: allow\ndecision: deny\n",
			[]string{`5: duplicate field "decision" (first at line 4)`}},
		{"cel syntax error", "id: a\nversion: \"1\"\nevents: [a]\nwhen: tool.name ==\ndecision: deny\n",
			[]string{"4: when: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} (at 1:13)"}},
		{"cel undeclared", "id: a\nversion: \"1\"\nevents: [a]\nwhen: tools.name == \"x\"\ndecision: deny\n",
			[]string{"4: when: undeclared reference to 'tools' (did you mean 'tool'?) (at 1:1)"}},
		{"when not bool", "id: a\nversion: \"1\"\nevents: [a]\nwhen: tool.name\ndecision: deny\n",
			[]string{"4: when: expression must be bool, not dyn"}[:0]},
		{"when string", "id: a\nversion: \"1\"\nevents: [a]\nwhen: event + \"x\"\ndecision: deny\n",
			[]string{"4: when: expression must be bool, not string"}},
		{"reasonExpr not string", "id: a\nversion: \"1\"\nevents: [a]\ndecision: deny\nreasonExpr: size(text)\n",
			[]string{"5: reasonExpr: expression must be string, not int"}},
		{"reason and reasonExpr", "id: a\nversion: \"1\"\nevents: [a]\ndecision: deny\nreason: x\nreasonExpr: '\"y\"'\n",
			[]string{"6: reason and reasonExpr are exclusive"}},
		{"modify without ops", "id: a\nversion: \"1\"\nevents: [a]\ndecision: modify\n",
			[]string{"4: decision modify needs a modify list"}},
		{"ops without modify", "id: a\nversion: \"1\"\nevents: [a]\ndecision: deny\nmodify:\n  - redact: [email]\n",
			[]string{"5: modify is only valid with decision: modify (decision is deny)"}},
		{"bad op", "id: a\nversion: \"1\"\nevents: [a]\ndecision: modify\nmodify:\n  - redact: [email]\n    set: {path: /a, value: '1'}\n  - drop: /x\n",
			[]string{"6: modify[0]: an operation needs exactly one of redact, set, patch", `8: modify[1]: unknown field "drop" (want redact, set or patch)`}},
		{"bad pointer", "id: a\nversion: \"1\"\nevents: [a]\ndecision: modify\nmodify:\n  - set: {path: a/b, value: '1'}\n",
			[]string{`6: modify[0].set.path: JSON pointer "a/b" must start with '/'`}},
		{"bad set value", "id: a\nversion: \"1\"\nevents: [a]\ndecision: modify\nmodify:\n  - set:\n      path: /a\n      value: nope\n",
			[]string{"8: modify[0].set.value: undeclared reference to 'nope' (at 1:1)"}},
		{"bad mode", "id: a\nversion: \"1\"\nevents: [a]\ndecision: deny\nmode: log\n",
			[]string{`5: unknown mode "log" (want enforce or audit)`}},
		{"bad priority", "id: a\nversion: \"1\"\nevents: [a]\ndecision: deny\npriority: high\n",
			[]string{`5: priority must be an integer, not "high"`}},
		{"empty events", "id: a\nversion: \"1\"\nevents: []\ndecision: deny\n",
			[]string{"3: events must be a non-empty list of event names or globs"}},
		{"events not strings", "id: a\nversion: \"1\"\nevents: [{a: b}]\ndecision: deny\n",
			[]string{"3: events must be a non-empty list of event names or globs"}},
		{"version null", "id: a\nversion:\nevents: [a]\ndecision: deny\n",
			[]string{"2: version must be a non-empty string"}},
		{"when not scalar", "id: a\nversion: \"1\"\nevents: [a]\nwhen: [x]\ndecision: deny\n",
			[]string{"4: when must be a CEL expression (string)"}},
		{"not a mapping", "- id: a\n",
			[]string{"1: a policy must be a mapping of fields (id, version, events, ...)"}},
		{"yaml syntax", "id: a\nversion: \"1\n",
			[]string{"2: invalid YAML: found unexpected end of stream"}},
		{"several errors", "id: a\nversion: \"1\"\nevents: [a]\nwhen: nope\ndecision: nay\nmode: x\n",
			[]string{"4: when: undeclared reference to 'nope' (at 1:1)",
				`5: unknown decision "nay" (want allow, deny, modify or ask)`, `6: unknown mode "x" (want enforce or audit)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "p.yaml", tc.src)
			_, err := Load(p)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var el ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("Load error = %v, want an ErrorList", err)
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = p + ":" + w
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			for _, e := range el {
				if e.File != p || e.Line == 0 {
					t.Errorf("error %+v: want file %s and a line", e, p)
				}
			}
		})
	}
}

func TestLoadDuplicateIDAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", "id: x\nversion: \"1\"\nevents: [e]\ndecision: allow\n")
	b := writeFile(t, dir, "b.yml", "# other\nid: x\nversion: \"2\"\nevents: [e]\ndecision: deny\n")
	_, err := Load(dir)
	want := b + `:2: duplicate policy id "x" (first defined at ` + a + ":1)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestLoadMissingPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(p)
	if err == nil || err.Error() != p+": no such file or directory" {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadDirectoryAndFields(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.yaml", `id: b1
version: 2
events: steps/toolCallRequest
decision: deny
priority: -1
---
---
id: b2
version: 1.10
description: second in b
events: ["steps/*"]
decision: ask
mode: audit
`)
	writeFile(t, dir, "a.yml", "id: a1\nversion: \"1\"\nevents: [x]\ndecision: allow\n")
	writeFile(t, dir, "notes.txt", "not a policy")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range s.Policies() {
		ids = append(ids, p.ID)
	}
	if got := strings.Join(ids, ","); got != "b1,a1,b2" {
		t.Errorf("order = %s, want b1,a1,b2 (priority, then file order)", got)
	}
	b1, b2 := s.Get("b1"), s.Get("b2")
	if b1.Version != "2" || b2.Version != "1.10" || b1.Priority != -1 || b1.Events[0] != "steps/toolCallRequest" {
		t.Errorf("b1 = %+v, b2 = %+v", b1, b2)
	}
	if b2.Mode != warden.Audit || b2.Decision != warden.Ask || b2.Reason != "second in b" || b2.Line != 8 {
		t.Errorf("b2 = %+v", b2)
	}
	if b1.Reason != "policy b1: deny" {
		t.Errorf("default reason = %q", b1.Reason)
	}
	if len(s.Sources()) != 2 {
		t.Errorf("sources = %v", s.Sources())
	}
}

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"p/x.yaml": {Data: []byte("id: x\nversion: \"1\"\nevents: [e]\ndecision: allow\n")},
		"p/y.yaml": {Data: []byte("id: y\nversion: \"1\"\nevents: [e]\ndecision: maybe\n")},
	}
	_, err := LoadFS(fsys, "p")
	if err == nil || err.Error() != `p/y.yaml:4: unknown decision "maybe" (want allow, deny, modify or ask)` {
		t.Fatalf("err = %v", err)
	}
	s, err := LoadFS(fsys, "p/x.yaml")
	if err != nil || s.Len() != 1 {
		t.Fatalf("LoadFS = %v, %v", s, err)
	}
}

// TestDirectorySkipsTestFiles: a directory's *_test.yaml files (warden
// test's cases, beside the policies) are not loaded as policies.
func TestDirectorySkipsTestFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"p/a.yaml":          {Data: []byte("id: a\nversion: \"1\"\nevents: [tool.pre_call]\ndecision: deny\n")},
		"p/email_test.yaml": {Data: []byte("tests:\n  - name: x\n    event: tool.pre_call\n    payload: {}\n    expect: {decision: deny}\n")},
		"p/b_TEST.yml":      {Data: []byte("tests: []\n")},
	}
	set, err := LoadFS(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(set.Policies()); n != 1 {
		t.Fatalf("%d policies, want 1", n)
	}
	for name, want := range map[string]bool{"x_test.yaml": true, "dir/x_test.yml": true, "x_TEST.YAML": true, "x.yaml": false, "test.yaml": false, "x_test.json": false} {
		if IsTestFile(name) != want {
			t.Errorf("IsTestFile(%q) = %v", name, !want)
		}
	}
}
