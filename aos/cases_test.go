package aos_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/policytest"
)

// casesDir holds the repo's own policy cases: AOS requests with the policies
// they are decided by, as policy test files (`warden test`, CONTRACT §13).
const casesDir = "../testdata/cases"

// minCases is how many cases casesDir held when they moved to the policy
// test format; fewer means some were lost.
const minCases = 58

// TestPolicyCases runs testdata/cases through `warden test`'s runner: every
// request is answered by the AOS endpoint's handler over the core, and each
// case is a subtest named by its file and name.
func TestPolicyCases(t *testing.T) {
	rep, err := policytest.Run(context.Background(), casesDir)
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Tests(); n < minCases {
		t.Errorf("%s holds %d cases, want at least %d", casesDir, n, minCases)
	}
	for _, f := range rep.Files {
		rel, _ := filepath.Rel(casesDir, f.Path)
		for _, c := range f.Cases {
			t.Run(strings.TrimSuffix(rel, "_test.yaml")+"/"+c.Name, func(t *testing.T) {
				if !c.Passed {
					t.Error(c.Text(f.Path))
				}
			})
		}
	}
}
