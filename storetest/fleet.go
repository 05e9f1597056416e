package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
)

// FleetStore is what RunFleet tests: the cursor and instance stores.
type FleetStore interface {
	audit.CursorStore
	registry.Store
}

// RunFleet runs the audit.CursorStore and registry.Store contract
// tests as subtests of t. open must return a new, empty store for each
// (sub)test and should register a t.Cleanup that closes it; reopen, when
// not nil, closes the store and opens the same data again (a restart).
//
// The contract checked, beyond the interfaces' documentation:
//
//   - a cursor never set reads ""; setting it replaces the one before;
//     cursors are told apart by name; an empty name or id is refused;
//   - 8 goroutines setting one cursor at once: it ends as one of them;
//   - Heartbeat upserts by ID (the second heartbeat of an ID replaces its
//     fields, it adds no row), Instances orders by ID and keeps times to
//     the microsecond; an invalid instance (registry.Valid) is
//     refused and stores nothing;
//   - ForgetInstances deletes exactly those last seen before the cutoff;
//   - with reopen, cursors and instances survive a restart.
func RunFleet(t *testing.T, open func(t *testing.T) FleetStore, reopen func(t *testing.T, s FleetStore) FleetStore) {
	t.Helper()
	ctx := context.Background()
	cursor := func(t *testing.T, s FleetStore, name string) string {
		t.Helper()
		id, err := s.StreamCursor(ctx, name)
		if err != nil {
			t.Fatalf("StreamCursor(%q): %v", name, err)
		}
		return id
	}
	set := func(t *testing.T, s FleetStore, name, id string) {
		t.Helper()
		if err := s.SetStreamCursor(ctx, name, id); err != nil {
			t.Fatalf("SetStreamCursor(%q, %q): %v", name, id, err)
		}
	}
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC)
	inst := func(id string, seen time.Duration) registry.Instance {
		return registry.Instance{ID: id, Addr: "10.0.0.1:8787", Version: "v1.2.3", PolicyRevision: "rev-" + id,
			Started: t0, LastSeen: t0.Add(seen)}
	}

	t.Run("cursor", func(t *testing.T) {
		s := open(t)
		if got := cursor(t, s, "nats"); got != "" {
			t.Fatalf("unset cursor = %q, want \"\"", got)
		}
		set(t, s, "nats", "r1")
		set(t, s, "other", "x9")
		set(t, s, "nats", "r2")
		if got := cursor(t, s, "nats"); got != "r2" {
			t.Errorf("cursor nats = %q, want r2", got)
		}
		if got := cursor(t, s, "other"); got != "x9" {
			t.Errorf("cursor other = %q, want x9", got)
		}
		for _, c := range [][2]string{{"", "r3"}, {"nats", ""}} {
			if err := s.SetStreamCursor(ctx, c[0], c[1]); err == nil {
				t.Errorf("SetStreamCursor(%q, %q) succeeded, want an error", c[0], c[1])
			}
		}
		if got := cursor(t, s, "nats"); got != "r2" {
			t.Errorf("after refused sets: cursor = %q, want r2", got)
		}
	})

	t.Run("cursor concurrent", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 10 {
					if err := s.SetStreamCursor(ctx, "c", fmt.Sprintf("g%d-%d", i, j)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := cursor(t, s, "c"); !strings.HasSuffix(got, "-9") {
			t.Errorf("cursor = %q, want some goroutine's last id", got)
		}
	})

	t.Run("instances", func(t *testing.T) {
		s := open(t)
		if got, err := s.Instances(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Instances of an empty store = %v, %v", got, err)
		}
		for _, in := range []registry.Instance{inst("b", 0), inst("a", time.Second), inst("c", 2*time.Second)} {
			if err := s.Heartbeat(ctx, in); err != nil {
				t.Fatalf("Heartbeat(%s): %v", in.ID, err)
			}
		}
		again := inst("b", 10*time.Second)
		again.PolicyRevision, again.Addr = "rev-new", "10.0.0.2:8787"
		if err := s.Heartbeat(ctx, again); err != nil {
			t.Fatal(err)
		}
		got, err := s.Instances(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID != "a" || got[1].ID != "b" || got[2].ID != "c" {
			t.Fatalf("Instances = %+v, want a, b, c", got)
		}
		want := again
		want.Started = t0.Truncate(time.Microsecond)
		want.LastSeen = again.LastSeen.Truncate(time.Microsecond)
		if b := got[1]; b.Addr != want.Addr || b.Version != want.Version || b.PolicyRevision != want.PolicyRevision ||
			!b.Started.Equal(want.Started) || !b.LastSeen.Equal(want.LastSeen) {
			t.Errorf("instance b = %+v, want %+v", b, want)
		}
		for _, bad := range []registry.Instance{{}, {ID: strings.Repeat("x", registry.MaxField+1)},
			{ID: "d", Version: strings.Repeat("v", registry.MaxField+1)}} {
			if err := s.Heartbeat(ctx, bad); !errors.Is(err, registry.ErrInvalid) {
				t.Errorf("Heartbeat(invalid, id %.8q) = %v, want ErrInstanceInvalid", bad.ID, err)
			}
		}
		n, err := s.ForgetInstances(ctx, t0.Add(2*time.Second))
		if err != nil || n != 1 {
			t.Fatalf("ForgetInstances = %d, %v; want 1 (a)", n, err)
		}
		got, _ = s.Instances(ctx)
		if len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" {
			t.Errorf("after forgetting: %+v, want b, c", got)
		}
	})

	if reopen != nil {
		t.Run("reopen", func(t *testing.T) {
			s := open(t)
			set(t, s, "nats", "r7")
			if err := s.Heartbeat(ctx, inst("a", 0)); err != nil {
				t.Fatal(err)
			}
			s = reopen(t, s)
			if got := cursor(t, s, "nats"); got != "r7" {
				t.Errorf("cursor after reopen = %q, want r7", got)
			}
			if got, err := s.Instances(ctx); err != nil || len(got) != 1 || got[0].ID != "a" {
				t.Errorf("instances after reopen = %+v, %v", got, err)
			}
		})
	}
}
