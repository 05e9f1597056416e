package policytest

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestBrokenPolicy: a policy whose condition is inverted by mistake fails
// its cases, each named by its file:line, with the results that decided.
func TestBrokenPolicy(t *testing.T) {
	broken := strings.Replace(emailPolicy, `!string(tool.args.to)`, `string(tool.args.to)`, 1)
	wd, _ := os.Getwd()
	rep, err := runIn(t, map[string]string{"policies/email.yaml": broken, "policies/email_test.yaml": emailTests})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	golden(t, "broken.golden", out.String())
	if rep.Failed() != 2 || rep.Tests() != 2 {
		t.Errorf("failed %d of %d, want 2 of 2", rep.Failed(), rep.Tests())
	}
}

func TestPass(t *testing.T) {
	rep, err := runIn(t, map[string]string{"email.yaml": emailPolicy, "email_test.yaml": emailTests})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	if out.String() != "ok: 2 tests in 1 file\n" {
		t.Errorf("output %q", out.String())
	}
}

// TestCoverage: a policy that no case matches is flagged, one matched by
// a case is counted; an audit policy counts, an erroring one does not.
func TestCoverage(t *testing.T) {
	rep, err := runIn(t, map[string]string{"email.yaml": emailPolicy, "cards.yaml": cardsPolicy, "email_test.yaml": emailTests})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files[0]
	if len(f.Policies) != 2 || f.Policies[0].ID != "redact-cards" || f.Policies[0].Matched != 0 ||
		f.Policies[1].ID != "no-external-email" || f.Policies[1].Matched != 1 {
		t.Fatalf("coverage %+v", f.Policies)
	}
	var out bytes.Buffer
	if err := rep.WriteCoverage(&out); err != nil {
		t.Fatal(err)
	}
	want := "coverage of email_test.yaml (2 policies, 1 never matched):\n" +
		"  0  NEVER MATCHED  redact-cards       cards.yaml:1\n" +
		"  1                 no-external-email  email.yaml:1\n"
	if out.String() != want {
		t.Errorf("coverage:\n%s\nwant:\n%s", out.String(), want)
	}
	if nm := f.NeverMatched(); len(nm) != 1 || nm[0].ID != "redact-cards" {
		t.Errorf("NeverMatched = %+v", nm)
	}
}

// TestBuiltinCoverage: the pack's policies are listed as built-in.
func TestBuiltinCoverage(t *testing.T) {
	rep, err := runIn(t, map[string]string{"email.yaml": emailPolicy,
		"email_test.yaml": strings.Replace(emailTests, "builtin: false", "builtin: true", 1)})
	if err != nil {
		t.Fatal(err)
	}
	ps := rep.Files[0].Policies
	last := ps[len(ps)-1]
	if len(ps) < 2 || !ps[0].Builtin || !strings.HasSuffix(ps[0].Location(), " (built-in)") || last.Builtin || last.ID != "no-external-email" {
		t.Errorf("policies %+v", ps)
	}
}

// TestLoadErrors: a policy set that does not compile stops the run with
// the policy's file:line and the test file that uses it.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"policy does not compile", map[string]string{"p.yaml": "id: p\nversion: \"1\"\nevents: [tool.pre_call]\nwhen: 'tool.name =='\ndecision: deny\n",
			"p_test.yaml": emailTests}, []string{"p.yaml:4:", "p_test.yaml: the policy set of this test file does not load"}},
		{"missing policy path", map[string]string{"p_test.yaml": "policies: [gone.yaml]\n" + emailTests},
			[]string{"gone.yaml: no such file or directory"}},
		{"every malformed file is reported", map[string]string{"a_test.yaml": "tests: 1\n", "b/b_test.yaml": "x: 1\ntests: []\n"},
			[]string{"a_test.yaml:1: tests: want a list of cases", `b/b_test.yaml:1: unknown field "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runIn(t, tt.files)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// packTests is the built-in pack's test file, shipped beside the pack.
const packTests = "../policy/pack_test.yaml"

// TestBuiltinPack runs the pack's test file with coverage: every case
// passes, and every built-in policy is matched by at least one case, so a
// policy added to the pack without a test fails here.
func TestBuiltinPack(t *testing.T) {
	rep, err := Run(context.Background(), packTests)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	rep.WriteCoverage(&out)
	t.Log("\n" + out.String())
	if rep.Failed() > 0 {
		t.Errorf("%d of %d cases of %s failed", rep.Failed(), rep.Tests(), packTests)
	}
	pack, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files[0]
	covered := map[string]bool{}
	for _, p := range f.Policies {
		if !p.Builtin {
			t.Errorf("%s: policy %s (%s) is not the pack's: the file tests the pack alone", packTests, p.ID, p.Location())
		}
		covered[p.ID] = p.Matched > 0
	}
	for _, p := range pack.Policies() {
		if !covered[p.ID] {
			t.Errorf("built-in policy %s (%s:%d) is never matched by a case of %s", p.ID, p.File, p.Line, packTests)
		}
	}
}

// emailPolicy is the README's policy: external email needs approval.
const emailPolicy = `id: no-external-email
version: "4"
description: External email needs approval.
events: ["steps/toolCallRequest", "tool.pre_call", "protocols/MCP"]
when: 'tool.name == "send_email" && direction != "inbound" && "to" in tool.args && !string(tool.args.to).endsWith("@company.io")'
decision: ask
reason: external email requires approval
`

// cardsPolicy redacts card numbers; no case of emailTests exercises it.
const cardsPolicy = `id: redact-cards
version: "1"
events: ["steps/*", "protocols/*", "tool.pre_call"]
when: '"credit_card" in pii(text)'
decision: modify
modify:
  - redact: [credit_card]
`

// emailTests are two cases of the email policy, its ask and its allow path.
const emailTests = `builtin: false
tests:
  - name: internal email passes
    event: tool.pre_call
    payload: {tool_name: send_email, tool_input: {to: ann@company.io}}
    expect: {decision: allow}
  - name: external email needs approval
    event: tool.pre_call
    payload: {tool_name: send_email, tool_input: {to: bob@evil.example}}
    expect: {decision: ask, policy: no-external-email, reason: requires approval}
`

// writeFiles writes name → content under dir, creating directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runIn writes files to a new directory, makes it the working directory
// and runs the tests under ".", so reports name paths relative to it.
func runIn(t *testing.T, files map[string]string) (*Report, error) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	t.Chdir(dir)
	return Run(context.Background(), ".")
}
