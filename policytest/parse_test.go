package policytest

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // each a line of the error
	}{
		{"empty", "", []string{"t_test.yaml:1: empty test file: it needs a tests: list"}},
		{"not YAML", "tests: [\n", []string{"t_test.yaml:1: invalid YAML: did not find expected node content"}},
		{"not a mapping", "- a\n", []string{"t_test.yaml:1: a test file is a mapping (policies:, builtin:, tests:)"}},
		{"no tests", "builtin: false\n", []string{"t_test.yaml:1: no tests: list"}},
		{"unknown top field", "polices: [.]\ntests: []\n",
			[]string{`t_test.yaml:1: unknown field "polices" (want policies, builtin, defaultDecision, tests)`}},
		{"bad builtin", "builtin: maybe\ntests: []\n", []string{"t_test.yaml:1: builtin: want true or false"}},
		{"bad defaultDecision", "defaultDecision: modify\ntests: []\n", []string{"t_test.yaml:1: defaultDecision: want allow or deny"}},
		{"unknown event", `tests:
  - name: typo
    event: tool.precall
    expect: {decision: allow}
`, []string{`t_test.yaml:3: test "typo": unknown event: "tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`}},
		{"glob is no event", `tests:
  - name: glob
    event: steps/*
    expect: {decision: allow}
`, []string{`t_test.yaml:3: test "glob": unknown event "steps/*"`}},
		{"neither event nor aos", `tests:
  - name: nothing
    expect: {decision: allow}
`, []string{`t_test.yaml:2: test "nothing": give event: and payload:, or aos:`}},
		{"both event and aos", `tests:
  - name: both
    event: tool.pre_call
    aos: {jsonrpc: "2.0", id: 1, method: ping}
    expect: {decision: allow}
`, []string{`t_test.yaml:4: test "both": give event: and payload:, or aos:, not both`}},
		{"aos cannot ask", `tests:
  - name: held
    aos: {jsonrpc: "2.0", id: 1, method: ping}
    expect: {decision: ask}
`, []string{`t_test.yaml:2: test "held": an AOS agent is answered allow, deny or modify`}},
		{"bad expectations", `tests:
  - name: bad
    event: tool.pre_call
    payload: [1, 2]
    expect: {decision: block, output: x}
`, []string{
			"t_test.yaml:4: payload: want a mapping (a JSON object)",
			`t_test.yaml:5: expect.decision: "block" is not allow, deny, modify, ask or defer`,
			`t_test.yaml:5: expect: unknown field "output"`}},
		{"tool changes", `tests:
  - name: not a list
    event: protocols/MCP
    tool_changes: {change: added}
    expect: {decision: allow}
  - name: bad change
    event: protocols/MCP
    tool_changes: [{change: renamed, name: x}, {change: added, nme: y}]
    expect: {decision: allow}
  - name: wrong event
    event: tool.pre_call
    tool_changes: [{change: added, name: x}]
    expect: {decision: allow}
  - name: bad kind
    event: protocols/MCP
    tool_changes:
      - {change: added, name: x}
      - {change: renamed, name: y}
    expect: {decision: allow}
`, []string{
			"t_test.yaml:4: tool_changes: want a list of {change, server, name, old, new}",
			`t_test.yaml:8: tool_changes: json: unknown field "nme"`,
			`t_test.yaml:10: test "wrong event": tool_changes: goes with event: protocols/MCP (a tools/list answer)`,
			`t_test.yaml:18: tool_changes[1]: change "renamed" (want changed, added or removed)`}},
		{"no name, no expect", `tests:
  - event: tool.pre_call
`, []string{"t_test.yaml:2: a test needs a name:", `t_test.yaml:2: test "line 2": no expect:`}},
		{"duplicate name", `tests:
  - {name: a, event: tool.pre_call, expect: {decision: allow}}
  - {name: a, event: tool.pre_call, expect: {decision: allow}}
`, []string{`t_test.yaml:3: test "a": the name is taken by the test at line 2`}},
		{"setup without aos", `tests:
  - name: s
    event: tool.pre_call
    setup: [{jsonrpc: "2.0", id: 1, method: ping}]
    expect: {decision: allow}
`, []string{`t_test.yaml:2: test "s": setup: goes with aos:`}},
		{"field twice", "builtin: false\nbuiltin: true\ntests: []\n", []string{"t_test.yaml:2: builtin: given twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t_test.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("errors:\n%s\nwant %d:\n%s", err, len(tt.want), strings.Join(tt.want, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d = %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.yaml": emailPolicy, "b.yml": cardsPolicy, "other_test.yaml": emailTests, "sub/c.yaml": cardsPolicy})
	path := filepath.Join(dir, "x_test.yaml")
	tests := []struct {
		name, src string
		policies  []string
		builtin   bool
	}{
		{"default: the directory's policy files, not its test files", "tests: []\n",
			[]string{"a.yaml", "b.yml"}, true},
		{"a directory and a file", "policies: [., sub/c.yaml]\nbuiltin: false\ntests: []\n",
			[]string{"a.yaml", "b.yml", "sub/c.yaml"}, false},
		{"one path as a string", "policies: sub\ntests: []\n", []string{"sub/c.yaml"}, true},
		{"no policies, the pack alone", "policies: []\ntests: []\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(path, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range tt.policies {
				want = append(want, filepath.Join(dir, p))
			}
			if !reflect.DeepEqual(f.Policies, want) || f.Builtin != tt.builtin {
				t.Errorf("policies %v builtin %v, want %v %v", f.Policies, f.Builtin, want, tt.builtin)
			}
		})
	}
}

func TestParseCase(t *testing.T) {
	f, err := Parse("t_test.yaml", []byte(`defaultDecision: deny
tests:
  - name: event
    event: tool.pre_call
    payload: {tool_name: x, n: 1}
    expect:
      decision: modify
      output_contains: a
      output_not_contains: [b, c]
  - name: aos
    setup: [{jsonrpc: "2.0", id: 1, method: steps/toolCallRequest, params: {}}]
    aos: {jsonrpc: "2.0", id: 2, method: steps/toolCallResult, params: {}}
    expect: {decision: deny, policy: p, reason: r}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 2 || f.DefaultDecision.String() != "deny" {
		t.Fatalf("%+v", f)
	}
	ev, a := f.Cases[0], f.Cases[1]
	if ev.Line != 3 || string(ev.Payload) != `{"n":1,"tool_name":"x"}` || ev.AOS != nil ||
		!reflect.DeepEqual(ev.Expect, Expect{Decision: "modify", OutputContains: []string{"a"}, OutputNotContains: []string{"b", "c"}}) {
		t.Errorf("event case %+v", ev)
	}
	if a.Line != 10 || len(a.Setup) != 1 || !strings.Contains(string(a.AOS), `"method":"steps/toolCallResult"`) ||
		!reflect.DeepEqual(a.Expect, Expect{Decision: "deny", Policy: "p", Reason: "r"}) {
		t.Errorf("aos case %+v", a)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a_test.yaml": "", "p.yaml": "", "sub/b_test.yml": "", "sub/c_TEST.yaml": "",
		".hidden/d_test.yaml": "", "node_modules/e_test.yaml": "", "empty/p.yaml": "",
	})
	got, err := Find(dir, filepath.Join(dir, "p.yaml"), filepath.Join(dir, "a_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range got {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, r)
	}
	want := []string{"a_test.yaml", "sub/b_test.yml", "sub/c_TEST.yaml", "p.yaml"}
	if !reflect.DeepEqual(rel, want) {
		t.Errorf("Find = %v, want %v", rel, want)
	}
	if _, err := Find(filepath.Join(dir, "empty")); err == nil || !strings.Contains(err.Error(), "no test files") {
		t.Errorf("a directory without tests: %v", err)
	}
	if _, err := Find(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path: no error")
	}
}
