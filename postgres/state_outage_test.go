package postgres

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/approval"
)

// TestStateOutage cuts the connection to PostgreSQL (refused, then
// blackholed): every shared-state call of an ACS step and of an approval
// fails within its bound (so the step fails closed), and once PostgreSQL
// is back they succeed again without a restart, and the approval feed,
// listening again, says "" (re-read) and carries the next change.
func TestStateOutage(t *testing.T) {
	for _, blackhole := range []bool{false, true} {
		t.Run(fmt.Sprintf("blackhole=%v", blackhole), func(t *testing.T) {
			u := testSchemaURL(t)
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			p := newCutProxy(t, pu.Host)
			s := openTest(t, proxied(t, u, p), Options{Timeout: time.Second})
			other := openTest(t, u, Options{}) // another replica, not cut off
			ctx := context.Background()
			feed, err := s.ApprovalChanges(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if id := next(t, feed, 5*time.Second, "connecting"); id != "" {
				t.Fatalf("first id %q", id)
			}
			now := time.Now().UTC()
			if err := s.PutACSSession(ctx, &acsstate.Session{ID: "s1", Version: "1.0", Hello: now}); err != nil {
				t.Fatal(err)
			}
			calls := map[string]func(i int) error{
				"RememberRequest": func(i int) error {
					return s.RememberRequest(ctx, "s1", fmt.Sprintf("r%d", i), now, time.Minute)
				},
				"AppendACSEntry": func(i int) error {
					x, err := other.ACSSession(ctx, "s1")
					if err != nil {
						return err
					}
					h := fmt.Sprintf("h%d-%d", i, time.Now().UnixNano())
					return s.AppendACSEntry(ctx, "s1", x.Head, &acsstate.Entry{EntryID: h, EntryHash: h, PreviousHash: x.Head})
				},
				"CreateApproval": func(i int) error {
					return s.CreateApproval(ctx, &approval.Approval{ID: fmt.Sprintf("ap-%d-%d", i, time.Now().UnixNano()), Created: now, Expires: now.Add(time.Hour)})
				},
				"SessionLabels": func(int) error { _, err := s.SessionLabels(ctx, "", "s1"); return err },
			}
			p.cut(blackhole)
			for name, call := range calls {
				start := time.Now()
				err := call(1)
				d := time.Since(start)
				if err == nil {
					t.Fatalf("%s succeeded with PostgreSQL cut off", name)
				}
				if d > 3*time.Second {
					t.Fatalf("%s failed after %v, want within its 2 s bound: %v", name, d, err)
				}
				t.Logf("%s failed in %v: %v", name, d.Round(time.Millisecond), err)
			}
			p.restore()
			deadline := time.Now().Add(10 * time.Second)
			for name, call := range calls {
				for i := 2; ; i++ {
					err := call(i)
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s still failing after PostgreSQL came back: %v", name, err)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			// The feed listens again: "" first, then the others' changes.
			for {
				id := next(t, feed, 10*time.Second, "after PostgreSQL came back")
				if id == "" {
					break
				}
			}
			if err := other.CreateApproval(ctx, &approval.Approval{ID: "after", Created: now, Expires: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			for {
				if id := next(t, feed, 2*time.Second, "the next change"); id == "after" {
					break
				}
			}
		})
	}
}
