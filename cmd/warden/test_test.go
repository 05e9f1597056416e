package main

import (
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
)

// testFile has a case that testPolicies pass (deny) and one that they
// pass only when no-delete works.
const testFile = `builtin: false
tests:
  - name: deleting a database is denied
    event: tool.pre_call
    payload: {tool_name: delete_database, tool_input: {name: prod}}
    expect: {decision: deny, policy: no-delete, reason: not allowed}
  - name: reading is allowed
    event: tool.pre_call
    payload: {tool_name: read_file, tool_input: {path: /tmp/x}}
    expect: {decision: allow}
`

// testDir writes testPolicies (with no-delete broken when broken) and
// testFile to a new directory and returns it.
func testDir(t *testing.T, broken bool) string {
	t.Helper()
	dir := t.TempDir()
	pol := testPolicies
	if broken {
		pol = strings.Replace(pol, `tool.name == "delete_database"`, `tool.name == "drop_database"`, 1)
	}
	writeFile(t, dir, "policies.yaml", pol)
	writeFile(t, dir, "db_test.yaml", testFile)
	return dir
}

func TestTestExitCodes(t *testing.T) {
	good, bad := testDir(t, false), testDir(t, true)
	malformed := t.TempDir()
	writeFile(t, malformed, "x_test.yaml", "tests:\n  - name: a\n    event: tool.precall\n    expect: {decision: allow}\n")
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // substrings
	}{
		{"all pass", []string{"test", good}, 0, "ok: 2 tests in 1 file\n", ""},
		{"a file path", []string{"test", filepath.Join(good, "db_test.yaml")}, 0, "ok: 2 tests in 1 file", ""},
		{"a broken policy fails with file:line", []string{"test", bad}, 1,
			filepath.Join(bad, "db_test.yaml") + `:3: test "deleting a database is denied": decision allow, want deny; no deciding policy, want policy no-delete`, ""},
		{"flags after the path", []string{"test", bad, "--coverage"}, 1, "0  NEVER MATCHED  no-delete", ""},
		{"paths after --", []string{"test", "--coverage", "--", good}, 0, "(2 policies, 1 never matched)", ""},
		{"malformed test file", []string{"test", malformed}, 2, "",
			filepath.Join(malformed, "x_test.yaml") + `:3: test "a": unknown event: "tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`},
		{"no test files", []string{"test", t.TempDir()}, 2, "", "no test files (*_test.yaml) here"},
		{"missing path", []string{"test", filepath.Join(good, "nope")}, 2, "", "no such file or directory"},
		{"bad output", []string{"test", "-o", "xml", good}, 2, "", `-o "xml": want text, json or junit`},
		{"bad flag", []string{"test", "--nope", good}, 2, "", "flag provided but not defined"},
		{"help", []string{"test", "-h"}, 0, "", "Usage: warden test [PATH]..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout containing %q, stderr containing %q",
					code, tt.code, out, errOut, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestTestDefaultPath(t *testing.T) {
	dir := testDir(t, false)
	t.Chdir(dir)
	code, out, errOut := cli(t, "", "test", "--coverage")
	if code != 0 || !strings.HasPrefix(out, "ok: 2 tests in 1 file\ncoverage of db_test.yaml (2 policies, 1 never matched):\n") ||
		!strings.Contains(out, "NEVER MATCHED  redact-cards  policies.yaml:8") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestTestJSON(t *testing.T) {
	code, out, _ := cli(t, "", "test", "-o", "json", testDir(t, true))
	var rep struct {
		OK     bool `json:"ok"`
		Tests  int  `json:"tests"`
		Failed int  `json:"failed"`
		Files  []struct {
			File     string `json:"file"`
			Policies []struct {
				ID      string `json:"id"`
				Matched int    `json:"matched"`
			} `json:"policies"`
			Tests []struct {
				Name     string   `json:"name"`
				Line     int      `json:"line"`
				Passed   bool     `json:"passed"`
				Decision string   `json:"decision"`
				Failures []string `json:"failures"`
			} `json:"tests"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || rep.OK || rep.Tests != 2 || rep.Failed != 1 || len(rep.Files) != 1 {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
	c := rep.Files[0].Tests[0]
	if c.Passed || c.Line != 3 || c.Decision != "allow" || len(c.Failures) != 3 || rep.Files[0].Policies[0].Matched != 0 {
		t.Errorf("report %+v", rep.Files[0])
	}
}

func TestTestJUnit(t *testing.T) {
	dir := testDir(t, true)
	code, out, errOut := cli(t, "", "test", "-o", "junit", "--coverage", dir)
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	c := doc.Suites[0].Cases[0]
	if c.Failure == nil || !strings.HasPrefix(c.Failure.Message, filepath.Join(dir, "db_test.yaml")+":3: ") ||
		!strings.Contains(c.Failure.Text, "(no policy matched)") || doc.Suites[0].Cases[1].Failure != nil {
		t.Errorf("testcases %+v", doc.Suites[0].Cases)
	}
	// --coverage goes to stderr: stdout is one XML document.
	if !strings.Contains(errOut, "NEVER MATCHED  no-delete") || strings.Contains(out, "coverage") {
		t.Errorf("coverage on stderr: %q", errOut)
	}
}
