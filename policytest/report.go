package policytest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wardenhq/warden"
)

// maxOutput bounds the modified output a failure prints.
const maxOutput = 400

// WriteText writes one block per failed case: a line
// `file:line: test "name": decision deny, want allow` (every expectation
// that did not hold, joined by "; "), then every policy result of the
// decision indented; then the summary, `ok: N tests in M files` or
// `FAIL: K of N tests failed`.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if !c.Passed {
				b.WriteString(c.Text(f.Path))
			}
		}
	}
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the run's closing line.
func (r *Report) Summary() string {
	n, failed := r.Tests(), r.Failed()
	if failed > 0 {
		return fmt.Sprintf("FAIL: %d of %d tests failed", failed, n)
	}
	files := "files"
	if len(r.Files) == 1 {
		files = "file"
	}
	return fmt.Sprintf("ok: %d tests in %d %s", n, len(r.Files), files)
}

// FailureLine is a failed case's first line: file:line: test "name": ...
func FailureLine(file string, c *CaseReport) string {
	return fmt.Sprintf("%s:%d: test %q: %s", file, c.Line, c.Name, strings.Join(c.Failures, "; "))
}

// Text is a failed case as the text report prints it: its FailureLine
// (file is its test file), then its results indented.
func (c *CaseReport) Text(file string) string {
	return FailureLine(file, c) + "\n" + resultLines(c)
}

// resultLines lists a case's policy and hook results, one per line,
// indented: id, decision, mode, then the reason and the error; and the
// modified output when an output expectation failed.
func resultLines(c *CaseReport) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	n := 0
	for _, res := range c.Results {
		if res.Decision == "" && res.Error == "" && len(res.Labels) == 0 {
			continue // a step that abstained
		}
		n++
		d := res.Decision
		if d == "" && len(res.Labels) > 0 {
			d = "label " + strings.Join(res.Labels, ",")
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", resultName(res), d, res.Mode, resultDetail(res))
	}
	tw.Flush()
	if n == 0 && c.Decision != "" {
		b.WriteString("    (no policy matched)\n")
	}
	if c.Output != "" && (len(c.Expect.OutputContains) > 0 || len(c.Expect.OutputNotContains) > 0) {
		out := c.Output
		if len(out) > maxOutput {
			out = out[:maxOutput] + "…"
		}
		fmt.Fprintf(&b, "    output: %s\n", out)
	}
	return b.String()
}

func resultName(r warden.Result) string {
	if r.PolicyID != "" {
		return r.PolicyID
	}
	return r.Guardian
}

func resultDetail(r warden.Result) string {
	s := fmt.Sprintf("%q", r.Reason)
	if r.Error != "" {
		s += fmt.Sprintf(" error: %s", r.Error)
	}
	if r.Refused != "" {
		s += fmt.Sprintf(" refused: %s", r.Refused)
	}
	return s
}

// WriteCoverage lists, for each test file, every policy of its set with the
// number of cases that matched it; a policy no case matched is marked
// `0  NEVER MATCHED  policy-id  file:line`.
func (r *Report) WriteCoverage(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Files {
		fmt.Fprintf(&b, "coverage of %s (%d policies, %d never matched):\n", f.Path, len(f.Policies), len(f.NeverMatched()))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, p := range f.Policies {
			mark := ""
			if p.Matched == 0 {
				mark = "NEVER MATCHED"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", p.Matched, mark, p.ID, p.Location())
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// NeverMatched returns the file's policies that no case matched.
func (f *FileReport) NeverMatched() []PolicyCoverage {
	var out []PolicyCoverage
	for _, p := range f.Policies {
		if p.Matched == 0 {
			out = append(out, p)
		}
	}
	return out
}

// Location is where the policy is defined: file:line, "(built-in)" after
// a policy of the embedded pack.
func (p PolicyCoverage) Location() string {
	s := fmt.Sprintf("%s:%d", p.File, p.Line)
	if p.Builtin {
		s += " (built-in)"
	}
	return s
}

// WriteJSON writes the report as one indented JSON object: the files with
// their cases and coverage, and the totals.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		OK     bool         `json:"ok"`
		Tests  int          `json:"tests"`
		Failed int          `json:"failed"`
		Files  []FileReport `json:"files"`
	}{r.Failed() == 0, r.Tests(), r.Failed(), r.Files})
}
