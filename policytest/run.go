package policytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/policy"
)

// Report is the result of a run: one FileReport per test file, in the
// order they were found.
type Report struct {
	Files []FileReport `json:"files"`
}

// FileReport is one test file's cases and its policy set's coverage.
type FileReport struct {
	Path string `json:"file"`
	// Policies is every policy of the file's set, in set order, with the
	// number of cases that matched it.
	Policies []PolicyCoverage `json:"policies"`
	Cases    []CaseReport     `json:"tests"`
	// Timestamp is when the file's run started.
	Timestamp time.Time `json:"timestamp"`
}

// PolicyCoverage is one policy of a set and how many cases matched it: its
// result is among a case's decision's results without an error.
type PolicyCoverage struct {
	ID      string `json:"id"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Builtin bool   `json:"builtin,omitempty"`
	Matched int    `json:"matched"`
}

// CaseReport is one case's outcome: what was decided and, when it failed,
// what did not hold.
type CaseReport struct {
	Name string `json:"name"`
	Line int    `json:"line"`
	// Passed is true when every expectation held.
	Passed bool `json:"passed"`
	// Failures say which expectations did not hold (or why nothing could
	// be decided), e.g. "decision deny, want allow".
	Failures []string `json:"failures,omitempty"`
	Expect   Expect   `json:"expect"`
	// Decision, Policy, Reason and Output are what was decided: the
	// decision, the deciding policy, the reason (an AOS case: the answer's
	// message) and the modified output ("" unless modified).
	Decision string `json:"decision"`
	Policy   string `json:"policy,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Output   string `json:"output,omitempty"`
	// Labels are the session labels the step sets (its policies' label:
	// actions and its data's provenance), kept when it is taken.
	Labels []string `json:"labels,omitempty"`
	// Results are every policy's and hook's result for the decision.
	Results  []warden.Result `json:"results"`
	Duration time.Duration   `json:"duration_ns"`
}

// Tests returns the number of cases in the report.
func (r *Report) Tests() int {
	n := 0
	for _, f := range r.Files {
		n += len(f.Cases)
	}
	return n
}

// Failed returns the number of cases that failed.
func (r *Report) Failed() int {
	n := 0
	for _, f := range r.Files {
		n += f.Failed()
	}
	return n
}

// Failed returns the number of the file's cases that failed.
func (f *FileReport) Failed() int {
	n := 0
	for _, c := range f.Cases {
		if !c.Passed {
			n++
		}
	}
	return n
}

// Run finds the test files under paths (see Find), parses them and opens
// each one's policy set, then runs every case. Any problem before a case
// runs (no test file, a malformed file, a policy that does not compile) is
// returned as the error, naming file:line, and nothing is run; a case that
// fails is in the report.
func Run(ctx context.Context, paths ...string) (*Report, error) {
	names, err := Find(paths...)
	if err != nil {
		return nil, err
	}
	var files []*File
	var errs []error
	for _, n := range names {
		f, err := ParseFile(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	guardians := make([]*guardian.Guardian, len(files))
	defer func() {
		for _, g := range guardians {
			if g != nil {
				g.Close(context.Background())
			}
		}
	}()
	for i, f := range files {
		if guardians[i], err = f.Open(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rep := &Report{}
	for i, f := range files {
		rep.Files = append(rep.Files, f.Run(ctx, guardians[i]))
	}
	return rep, nil
}

// Open opens the Guardian that decides the file's cases: its policies
// (and the built-in pack unless builtin: false), its defaultDecision, no
// hooks and no trace. A set that does not compile is an error naming the
// policy file:line and the test file.
func (f *File) Open() (*guardian.Guardian, error) {
	cfg := config.Default()
	if f.DefaultDecision != warden.Abstain {
		cfg.DefaultDecision = f.DefaultDecision
	}
	g, err := guardian.Open(guardian.Options{Config: cfg, Policies: f.Policies, NoBuiltin: !f.Builtin})
	if err != nil {
		return nil, fmt.Errorf("%w\n%s: the policy set of this test file does not load", err, f.Path)
	}
	return g, nil
}

// Run decides every case of f with g and checks what it expects.
func (f *File) Run(ctx context.Context, g *guardian.Guardian) FileReport {
	fr := FileReport{Path: f.Path, Timestamp: time.Now()}
	set := g.Policies()
	var pack *policy.Set
	if f.Builtin {
		pack, _ = policy.Builtin()
	}
	index := map[string]int{}
	for _, p := range set.Policies() {
		index[p.ID] = len(fr.Policies)
		fr.Policies = append(fr.Policies, PolicyCoverage{ID: p.ID, File: p.File, Line: p.Line,
			Builtin: pack != nil && pack.Get(p.ID) != nil && pack.Get(p.ID).File == p.File})
	}
	for _, c := range f.Cases {
		cr := c.run(ctx, g)
		seen := map[string]bool{}
		for _, r := range cr.Results {
			i, ok := index[r.PolicyID]
			// A policy that only labels (label:, no decision:) matched
			// when its result names labels.
			if !ok || seen[r.PolicyID] || r.Error != "" || (r.Decision == "" && len(r.Labels) == 0) || r.Mode == "shadow" {
				continue
			}
			seen[r.PolicyID] = true
			fr.Policies[i].Matched++
		}
		fr.Cases = append(fr.Cases, cr)
	}
	return fr
}

// run decides one case and checks it.
func (c *Case) run(ctx context.Context, g *guardian.Guardian) CaseReport {
	cr := CaseReport{Name: c.Name, Line: c.Line, Expect: c.Expect}
	t0 := time.Now()
	var err error
	if c.AOS != nil {
		err = c.decideAOS(ctx, g, &cr)
	} else {
		err = c.decideEvent(ctx, g, &cr)
	}
	cr.Duration = time.Since(t0)
	if err != nil {
		cr.Failures = []string{err.Error()}
		return cr
	}
	cr.Failures = c.Expect.check(&cr)
	cr.Passed = len(cr.Failures) == 0
	return cr
}
