package guardian_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
)

// TestFleetLabelsFresh: a label replica A adds to a session counts at
// replica B's very next step, even though B read (and cached) the
// session's labels a moment before: over PostgreSQL the Guardian reads a
// session's labels from the store at every step, so a lethal trifecta
// whose steps land on different replicas is seen whole.
func TestFleetLabelsFresh(t *testing.T) {
	url := pgtest.SchemaURL(t)
	var gs [2]*guardian.Guardian
	var sts [2]*postgres.Store
	for i := range gs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := postgres.Open(ctx, url, postgres.Options{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		sts[i] = st
		g, err := guardian.Open(guardian.Options{Store: st, Data: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()); st.Close() })
		gs[i] = g
	}
	ctx := context.Background()
	for i, l := range []string{"read_private", "untrusted_input", "external_send"} {
		a, b := i%2, (i+1)%2
		before, err := gs[b].SessionLabels(ctx, "acme", "s1") // B has it cached now
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sts[a].AddSessionLabels(ctx, "acme", "s1", []string{l}, time.Now()); err != nil {
			t.Fatal(err)
		}
		after, err := gs[b].SessionLabels(ctx, "acme", "s1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(after, l) || len(after) != len(before)+1 {
			t.Fatalf("replica %d sees %q right after replica %d added %q (before: %q)", b, after, a, l, before)
		}
	}
}
