package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden/storetest"
)

// The shared-state contracts of storetest, each subtest on a fresh schema.
func TestApprovalsContract(t *testing.T) {
	testBaseURL(t)
	storetest.RunApprovals(t, func(t *testing.T) approval.ApprovalStore {
		return openTest(t, testSchemaURL(t), Options{})
	})
}

func TestACSContract(t *testing.T) {
	testBaseURL(t)
	storetest.RunACS(t, func(t *testing.T) acsstate.Store {
		return openTest(t, testSchemaURL(t), Options{})
	})
}

func TestAgBOMContract(t *testing.T) {
	testBaseURL(t)
	storetest.RunAgBOM(t, func(t *testing.T) agbom.Store {
		return openTest(t, testSchemaURL(t), Options{})
	})
}

func TestLabelsContract(t *testing.T) {
	testBaseURL(t)
	urls := map[labels.Store]string{}
	storetest.RunLabels(t, func(t *testing.T) labels.Store {
		u := testSchemaURL(t)
		s := openTest(t, u, Options{})
		urls[s] = u
		return s
	}, func(t *testing.T, s labels.Store) labels.Store {
		if err := s.(*Store).Close(); err != nil {
			t.Fatal(err)
		}
		return openTest(t, urls[s], Options{})
	})
}

// fleet opens two Stores (two replicas) on one fresh schema.
func fleet(t *testing.T) (a, b *Store) {
	t.Helper()
	u := testSchemaURL(t)
	return openTest(t, u, Options{}), openTest(t, u, Options{})
}

// TestFleetACSChain: two replicas advance one ACS session's chain at once,
// round after round from the same head: exactly one wins each round, the
// other sees acsstate.ErrChainMoved, and the chain is contiguous.
func TestFleetACSChain(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if err := a.PutACSSession(ctx, &acsstate.Session{ID: "s1", AgentID: "ag", Version: "1.0", Hello: at}); err != nil {
		t.Fatal(err)
	}
	const rounds = 100
	stores := []*Store{a, b}
	for r := range rounds {
		x, err := stores[r%2].ACSSession(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				e := &acsstate.Entry{EntryID: fmt.Sprintf("e%d-%d", r, i), StepID: fmt.Sprintf("req-%d-%d", r, i),
					StepType: "steps/toolCallRequest", Timestamp: at.Add(time.Duration(r) * time.Second),
					PreviousHash: x.Head, EntryHash: fmt.Sprintf("h%03d-%d", r, i), Decision: "allow"}
				switch err := s.AppendACSEntry(ctx, "s1", x.Head, e); {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, acsstate.ErrChainMoved):
				default:
					t.Errorf("round %d replica %d: %v", r, i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d replicas advanced the head, want exactly 1", r, n)
		}
	}
	es, err := b.ACSEntries(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != rounds {
		t.Fatalf("%d entries, want %d", len(es), rounds)
	}
	for i, e := range es {
		if i > 0 && e.PreviousHash != es[i-1].EntryHash {
			t.Fatalf("entry %d: previous_hash %q, want %q: the chain is broken", i, e.PreviousHash, es[i-1].EntryHash)
		}
	}
	x, _ := a.ACSSession(ctx, "s1")
	if x.Head != es[rounds-1].EntryHash || x.Entries != rounds {
		t.Fatalf("head %q/%d, want %q/%d", x.Head, x.Entries, es[rounds-1].EntryHash, rounds)
	}
}

// TestFleetReplay: the same request_id sent to two replicas at once is
// accepted once; a third try on either, within the window, is a replay.
func TestFleetReplay(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for r := range 100 {
		key := fmt.Sprintf("req-%d", r)
		var ok atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, s := range []*Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				switch err := s.RememberRequest(ctx, "s1", key, at, 5*time.Minute); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, acsstate.ErrReplay):
				default:
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := ok.Load(); n != 1 {
			t.Fatalf("%s accepted %d times, want once", key, n)
		}
		if err := b.RememberRequest(ctx, "s1", key, at.Add(time.Minute), 5*time.Minute); !errors.Is(err, acsstate.ErrReplay) {
			t.Fatalf("%s again within the window: %v, want a replay", key, err)
		}
	}
}

// TestFleetDecide: an approval decided on two replicas at once is decided
// once: one wins, the other gets approval.ErrApprovalDecided (the API's 409)
// and the approval as the winner stored it.
func TestFleetDecide(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for r := range 50 {
		id := fmt.Sprintf("ap-%d", r)
		if err := a.CreateApproval(ctx, &approval.Approval{ID: id, Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		type res struct {
			who string
			a   *approval.Approval
			err error
		}
		out := make(chan res, 2)
		start := make(chan struct{})
		for i, s := range []*Store{a, b} {
			go func() {
				<-start
				state := []approval.ApprovalState{approval.ApprovalApproved, approval.ApprovalDenied}[i]
				who := fmt.Sprintf("approver-%d", i)
				got, err := s.DecideApproval(ctx, id, state, who, "", now.Add(time.Minute))
				out <- res{who, got, err}
			}()
		}
		close(start)
		x, y := <-out, <-out
		if (x.err == nil) == (y.err == nil) {
			t.Fatalf("%s: errors %v and %v: want exactly one decision", id, x.err, y.err)
		}
		win, lose := x, y
		if x.err != nil {
			win, lose = y, x
		}
		if !errors.Is(lose.err, approval.ErrApprovalDecided) {
			t.Fatalf("%s: the loser got %v, want ErrApprovalDecided", id, lose.err)
		}
		if lose.a == nil || lose.a.DecidedBy != win.who || win.a.DecidedBy != win.who {
			t.Fatalf("%s: the loser sees %+v, want decided by %s", id, lose.a, win.who)
		}
	}
}

// TestFleetUseApproval: an approved step retried on two replicas at once
// is let through once.
func TestFleetUseApproval(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for r := range 30 {
		id := fmt.Sprintf("ap-%d", r)
		key := fmt.Sprintf("key-%d", r)
		if err := a.CreateApproval(ctx, &approval.Approval{ID: id, Key: key, Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.DecideApproval(ctx, id, approval.ApprovalApproved, "alice", "", now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		var used atomic.Int32
		var wg sync.WaitGroup
		for i, s := range []*Store{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := s.UseApproval(ctx, key, now, now.Add(time.Minute), fmt.Sprintf("rec-%d", i))
				if err != nil {
					t.Error(err)
				}
				if got != nil {
					used.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := used.Load(); n != 1 {
			t.Fatalf("%s used %d times, want once", id, n)
		}
	}
}

// TestFleetLabels: labels added to one session from two replicas at once
// are all kept (the union).
func TestFleetLabels(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var want []string
	var wg sync.WaitGroup
	for i := range 20 {
		l := fmt.Sprintf("l%02d", i)
		want = append(want, l)
		s := []*Store{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.AddSessionLabels(ctx, "acme", "s1", []string{l, "shared"}, at); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	want = append(want, "shared")
	slices.Sort(want)
	for _, s := range []*Store{a, b} {
		got, err := s.SessionLabels(ctx, "acme", "s1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("labels %q, want %q", got, want)
		}
	}
}

// TestStateReadOnly: a read-only store refuses every shared-state write.
func TestStateReadOnly(t *testing.T) {
	u := testSchemaURL(t)
	openTest(t, u, Options{}) // migrates
	ro := openTest(t, u, Options{ReadOnly: true})
	ctx := context.Background()
	now := time.Now()
	for name, err := range map[string]error{
		"CreateApproval":    ro.CreateApproval(ctx, &approval.Approval{ID: "x"}),
		"PutACSSession":     ro.PutACSSession(ctx, &acsstate.Session{ID: "x"}),
		"RememberRequest":   ro.RememberRequest(ctx, "x", "k", now, time.Minute),
		"PinTools":          ro.PinTools(ctx, "srv", nil, nil),
		"SetDecisionRecord": ro.SetDecisionRecord(ctx, "x", "r"),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
}

// TestStateNUL: strings with NUL bytes (which PostgreSQL's text cannot
// hold) are stored with U+FFFD in their place, and looked up the same way,
// rather than failing the write.
func TestStateNUL(t *testing.T) {
	s := openTest(t, testSchemaURL(t), Options{})
	ctx := context.Background()
	now := time.Now().UTC()
	sess := "sess\x00ion"
	a := &approval.Approval{ID: "ap\x00", SessionID: sess, Tool: "to\x00ol", Summary: "a\x00b", Key: "k\x00",
		Created: now, Expires: now.Add(time.Hour)}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Approval(ctx, "ap\x00")
	if err != nil || got.Summary != "a\uFFFDb" || got.SessionID != "sess\uFFFDion" {
		t.Fatalf("Approval: %+v, %v", got, err)
	}
	if l, err := s.ListApprovals(ctx, approval.ApprovalQuery{Session: sess}); err != nil || len(l) != 1 {
		t.Fatalf("ListApprovals by a session with NUL: %d, %v", len(l), err)
	}
	if _, err := s.DecideApproval(ctx, "ap\x00", approval.ApprovalApproved, "b\x00ob", "r\x00", now); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UseApproval(ctx, "k\x00", now.Add(-time.Hour), now, "rec\x00"); err != nil || u == nil {
		t.Fatalf("UseApproval: %v, %v", u, err)
	}
	if err := s.PutACSSession(ctx, &acsstate.Session{ID: sess, AgentID: "ag\x00", Methods: []string{"m\x00"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RememberRequest(ctx, sess, "req\x00", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendACSEntry(ctx, sess, "", &acsstate.Entry{EntryID: "e\x00", EntryHash: "h", StepID: "req\x00"}); err != nil {
		t.Fatal(err)
	}
	if es, err := s.ACSEntries(ctx, sess, 0, 0); err != nil || len(es) != 1 {
		t.Fatalf("ACSEntries: %v, %v", es, err)
	}
	if ls, err := s.AddSessionLabels(ctx, "ten\x00", sess, []string{"read_private"}, now); err != nil || len(ls) != 1 {
		t.Fatalf("AddSessionLabels: %v, %v", ls, err)
	}
	if err := s.UpdateAgBOM(ctx, &agbom.Update{Agent: "ag\x00", Source: agbom.SourceACS,
		Put: []agbom.StoredComponent{{ID: "c\x00", Type: "tool", Doc: []byte(`{"name":"x"}`)}}, At: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.PinTools(ctx, "srv\x00", []agbom.ToolPin{{Name: "n\x00", Description: "d\x00", Hash: "h"}}, nil); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.ToolPins(ctx, "srv\x00"); err != nil || len(ps) != 1 || ps[0].Description != "d\uFFFD" {
		t.Fatalf("ToolPins: %+v, %v", ps, err)
	}
}
