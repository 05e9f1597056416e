package policy

import (
	"context"
	"testing"
)

// TestDecideAllocations bounds the allocations of one decision over an event
// whose text is already built (Event.Text caches it), so that a change that
// brings garbage back onto the hot path fails here rather than only in a
// benchmark: the built-in pack on an ordinary tool call, and the 12-policy
// benchmark set on a call that matches nothing and on one that is denied.
// The bounds are what the engine allocates today; before issue 15 it was
// 47, 6 and 12.
func TestDecideAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	builtin, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	bench := mustLoad(t, benchPolicies())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		set  *Set
		tool string
		max  float64
	}{
		{"builtin", builtin, "read_file", 5},
		{"nothing-matches", bench, "read_file", 3},
		{"one-denies", bench, "rm", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(tc.set, Options{})
			ev := benchEvent(tc.tool)
			_ = ev.Text()
			n := testing.AllocsPerRun(200, func() { _, _ = e.Decide(ctx, ev) })
			t.Logf("%v allocations per decision", n)
			if n > tc.max {
				t.Fatalf("%v allocations per decision, want at most %v", n, tc.max)
			}
		})
	}
}
