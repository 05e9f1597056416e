package main

import (
	"fmt"
	"testing"

	"github.com/wardenhq/warden/policy"
)

// packPolicies is "N policies" for the built-in pack plus extra policies,
// as `warden check` counts them: the pack grows, the tests need not change.
func packPolicies(t *testing.T, extra int) string {
	t.Helper()
	pack, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d policies", pack.Len()+extra)
}
