package policytest

import (
	"bytes"
	"context"
	"testing"

	"github.com/wardenhq/warden/policy"
)

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
