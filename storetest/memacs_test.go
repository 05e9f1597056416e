package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemACSForgets: a session's replay keys stay bounded by the window
// (about twice the keys of one window), and keys of the window are still
// replays.
func TestMemACSForgets(t *testing.T) {
	m := NewMem()
	ctx := context.Background()
	const window, step, n = time.Second, time.Millisecond, 10000
	live := int(window/step) + 1
	most := 0
	for i := range n {
		at := base.Add(time.Duration(i) * step)
		if err := m.RememberRequest(ctx, "s1", fmt.Sprint("k", i), at, window); err != nil {
			t.Fatal(err)
		}
		m.d.mu.Lock()
		most = max(most, len(m.d.acs.replays["s1"].at))
		m.d.mu.Unlock()
	}
	if most > 2*live+minSweep {
		t.Errorf("%d keys held at most, want at most %d (window of %d keys)", most, 2*live+minSweep, live)
	}
	last := base.Add((n - 1) * step)
	if err := m.RememberRequest(ctx, "s1", fmt.Sprint("k", n-live), last, window); err == nil {
		t.Errorf("the oldest key of the window was forgotten")
	}
	if err := m.RememberRequest(ctx, "s1", fmt.Sprint("k", n-live-1), last, window); err != nil {
		t.Errorf("a key older than the window: %v", err)
	}
}
