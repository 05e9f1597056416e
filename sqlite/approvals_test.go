package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/tracesql"

	"github.com/wardenhq/warden/storetest"
)

func TestApprovals(t *testing.T) {
	storetest.RunApprovals(t, func(t *testing.T) approval.ApprovalStore {
		return open(t, t.TempDir(), Options{})
	})
}

// approvalIndexes are the indexes of schema 4's approvals table.
var approvalIndexes = []string{
	"approvals_id:CREATE UNIQUE INDEX approvals_id ON approvals (id)",
	"approvals_key:CREATE INDEX approvals_key ON approvals (key, decided_at) WHERE state = 'approved' AND used_at = 0",
	"approvals_session:CREATE INDEX approvals_session ON approvals (session_id, created)",
	"approvals_state_expires:CREATE INDEX approvals_state_expires ON approvals (state, expires)",
}

func testApproval(id string, created time.Time) *approval.Approval {
	return &approval.Approval{
		ID: id, State: approval.ApprovalPending, Event: "steps/toolCallRequest", Surface: "aos",
		SessionID: "sess", AgentID: "agent", Tool: "bash", Summary: "bash: ls", Reason: "ask",
		PolicyID: "ask-shell", Created: created, Expires: created.Add(15 * time.Minute),
		RecordID: "rec-" + id, Caller: "agents", Tenant: "acme", Key: "key-" + id,
	}
}

// TestApprovalsDurable: approvals written through one store are there after
// Close and reopen, and a read-only store reads them but changes nothing.
func TestApprovalsDurable(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, Options{Synchronous: "full"})
	for _, id := range []string{"a1", "a2", "a3"} {
		if err := s.CreateApproval(ctx, testApproval(id, base)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DecideApproval(ctx, "a1", approval.ApprovalApproved, "alice", "ok", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDecisionRecord(ctx, "a1", "rec-decision"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UseApproval(ctx, "key-a1", base, base.Add(2*time.Minute), "rec-retry"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DecideApproval(ctx, "a2", approval.ApprovalDenied, "bob", "no", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want, err := s.ListApprovals(ctx, approval.ApprovalQuery{})
	if err != nil || len(want) != 3 {
		t.Fatalf("ListApprovals: %d, %v", len(want), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A closed store refuses changes.
	for name, err := range changeAll(s) {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}

	s = open(t, dir, Options{})
	got, err := s.ListApprovals(ctx, approval.ApprovalQuery{})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("after reopen: %+v, %v\nwant %+v", got, err, want)
	}
	if a, err := s.Approval(ctx, "a1"); err != nil || a.UsedRecordID != "rec-retry" || a.DecisionRecordID != "rec-decision" {
		t.Errorf("a1 after reopen: %+v, %v", a, err)
	}

	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err = r.ListApprovals(ctx, approval.ApprovalQuery{})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("read-only: %+v, %v\nwant %+v", got, err, want)
	}
	if a, err := r.Approval(ctx, "a2"); err != nil || a.State != approval.ApprovalDenied {
		t.Errorf("read-only Approval(a2): %+v, %v", a, err)
	}
	if _, err := r.Approval(ctx, "nope"); !errors.Is(err, approval.ErrApprovalNotFound) {
		t.Errorf("read-only Approval(nope): %v", err)
	}
	for name, err := range changeAll(r) {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only store: %v, want ErrReadOnly", name, err)
		}
	}
	// The read-only store sees what the server writes meanwhile.
	if err := s.CreateApproval(ctx, testApproval("a4", base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ListApprovals(ctx, approval.ApprovalQuery{State: approval.ApprovalPending}); err != nil || len(got) != 2 || got[0].ID != "a4" {
		t.Errorf("read-only sees pending %+v, %v; want a4, a3", got, err)
	}
}

// changeAll calls every changing method of s on a3 and returns their errors.
func changeAll(s *Store) map[string]error {
	ctx := context.Background()
	errs := map[string]error{}
	errs["CreateApproval"] = s.CreateApproval(ctx, testApproval("new", base))
	_, errs["DecideApproval"] = s.DecideApproval(ctx, "a3", approval.ApprovalApproved, "alice", "", base)
	errs["SetDecisionRecord"] = s.SetDecisionRecord(ctx, "a3", "rec")
	_, errs["UseApproval"] = s.UseApproval(ctx, "key-a1", base, base, "rec")
	_, errs["UseApproval with no key"] = s.UseApproval(ctx, "", base, base, "rec")
	_, errs["ExpireApprovals"] = s.ExpireApprovals(ctx, base.Add(time.Hour))
	return errs
}

// TestApprovalsTwoStores: two stores on one directory (two processes
// sharing --data) race to decide one approval and to use one key; SQLite's
// write lock makes each compare-and-set atomic across them.
func TestApprovalsTwoStores(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{open(t, dir, Options{}), open(t, dir, Options{})}
	ctx := context.Background()
	for i := range 20 {
		a := testApproval(fmt.Sprintf("a%02d", i), base)
		a.Key = "shared"
		if err := stores[i%2].CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	decided := map[string]int{}
	used := map[string]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[g%2]
			for i := range 20 {
				id := fmt.Sprintf("a%02d", i)
				_, err := s.DecideApproval(ctx, id, approval.ApprovalApproved, fmt.Sprint("approver-", g), "", base.Add(time.Minute))
				if err != nil && !errors.Is(err, approval.ErrApprovalDecided) {
					t.Errorf("decide %s: %v", id, err)
					continue
				}
				mu.Lock()
				if err == nil {
					decided[id]++
				}
				mu.Unlock()
			}
			for range 3 {
				a, err := s.UseApproval(ctx, "shared", base, base.Add(2*time.Minute), fmt.Sprint("retry-", g))
				if err != nil {
					t.Errorf("use: %v", err)
					continue
				}
				if a != nil {
					mu.Lock()
					used[a.ID]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for i := range 20 {
		id := fmt.Sprintf("a%02d", i)
		if decided[id] != 1 {
			t.Errorf("%s decided %d times", id, decided[id])
		}
		if used[id] != 1 {
			t.Errorf("%s used %d times", id, used[id])
		}
	}
}

// TestApprovalPlans checks that each approvals query finds its rows by the
// index meant for it (schema.go).
func TestApprovalPlans(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	for _, tt := range []struct {
		name, stmt string
		args       []any
		index      string
	}{
		{"Approval", `SELECT ` + tracesql.ApprovalCols + ` FROM approvals WHERE id = ?`, []any{"x"}, "approvals_id"},
		{"UseApproval", `UPDATE approvals SET used_at = ?, used_record_id = ?
			WHERE id = (SELECT id FROM approvals
				WHERE key = ? AND state = 'approved' AND used_at = 0 AND decided_at >= ?
				ORDER BY decided_at, id LIMIT 1)
			AND state = 'approved' AND used_at = 0`, []any{1, "r", "k", 0}, "approvals_key"},
		{"ExpireApprovals", `UPDATE approvals SET state = 'expired' WHERE state = 'pending' AND expires < ?`, []any{1}, "approvals_state_expires"},
		{"pending list", `SELECT id FROM approvals WHERE state = ? ORDER BY created DESC, id DESC LIMIT ?`, []any{"pending", 100}, "approvals_state_expires"},
		{"session list", `SELECT id FROM approvals WHERE session_id = ? ORDER BY created DESC, id DESC LIMIT ?`, []any{"s", 100}, "approvals_session"},
		{"cursor", `SELECT created FROM approvals WHERE id = ?`, []any{"x"}, "approvals_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if plan := queryPlan(t, s, tt.stmt, tt.args); !strings.Contains(plan, tt.index) {
				t.Errorf("does not use %s: %s", tt.index, plan)
			}
		})
	}
	// UseApproval's subquery reads approvals_key in decided_at order.
	plan := queryPlan(t, s, `SELECT id FROM approvals WHERE key = ? AND state = 'approved' AND used_at = 0 AND decided_at >= ?
		ORDER BY decided_at, id LIMIT 1`, []any{"k", 0})
	if !strings.Contains(plan, "approvals_key") {
		t.Errorf("UseApproval's subquery does not use approvals_key: %s", plan)
	}
}

// TestApprovalConnection: approvals are written as durably as records and
// leave checkpoints to the checkpointer.
func TestApprovalConnection(t *testing.T) {
	for _, tt := range []struct {
		sync string
		want int
	}{{"", 1}, {"full", 2}} {
		s := open(t, t.TempDir(), Options{Synchronous: tt.sync})
		var syn, auto int
		if err := s.adb.QueryRow("PRAGMA synchronous").Scan(&syn); err != nil {
			t.Fatal(err)
		}
		if err := s.adb.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
			t.Fatal(err)
		}
		if syn != tt.want || auto != 0 {
			t.Errorf("Synchronous %q: approvals connection has synchronous %d, wal_autocheckpoint %d; want %d, 0", tt.sync, syn, auto, tt.want)
		}
	}
}

// TestMigrateFromSchema3 upgrades a schema-3 trace in place: its records
// stay, and approvals can be kept.
func TestMigrateFromSchema3(t *testing.T) {
	dir := privateDir(t)
	makeV1(t, dir, "a", "b", "c")
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[1:3] {
		if err := m(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET caller = 'agents', tenant = 'acme' WHERE id = 'b'`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "older") {
		t.Errorf("OpenReadOnly of schema 3: %v, want an 'older' error", err)
	}
	for round := range 2 { // the second Open finds the current schema
		s := open(t, dir, Options{})
		var v int
		if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
			t.Fatalf("user_version = %d, %v; want %d", v, err, schemaVersion)
		}
		got := scanAll(t, s, audit.Query{Oldest: true})
		if g := idsOf(got); !slices.Equal(g, []string{"a", "b", "c"}) {
			t.Fatalf("round %d: records %q, want [a b c]", round, g)
		}
		if r := got[1]; r.Caller != "agents" || r.Tenant != "acme" || string(r.Input) != `{"tool":"bash","i":1}` {
			t.Errorf("round %d: record b read back as %+v", round, r)
		}
		want := append(slices.Clone(acsIndexes), approvalIndexes...)
		if idx := indexes(t, s); len(idx) < len(want) || !slices.Equal(idx[:len(want)], want) {
			t.Errorf("round %d: indexes %q", round, idx)
		}
		if round == 0 {
			if err := s.CreateApproval(ctx, testApproval("ap", base)); err != nil {
				t.Fatal(err)
			}
		}
		if a, err := s.Approval(ctx, "ap"); err != nil || a.State != approval.ApprovalPending {
			t.Errorf("round %d: approval %+v, %v", round, a, err)
		}
		s.Close()
	}
}

// TestPruneApprovals: pruning by age deletes the decided approvals decided
// (and used) before the cutoff, never a pending one; pruning by size
// deletes none.
func TestPruneApprovals(t *testing.T) {
	dir := privateDir(t)
	s := open(t, dir, Options{})
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(48 * time.Hour)
	old, recent := t0, now.Add(-time.Hour)
	for _, tt := range []struct {
		id      string
		created time.Time
		state   approval.ApprovalState
		decided time.Time
		used    time.Time
	}{
		{"pending-old", old, approval.ApprovalPending, time.Time{}, time.Time{}},
		{"pending-recent", recent, approval.ApprovalPending, time.Time{}, time.Time{}},
		{"approved-old", old, approval.ApprovalApproved, old.Add(time.Minute), time.Time{}},
		{"approved-old-used-old", old, approval.ApprovalApproved, old.Add(time.Minute), old.Add(2 * time.Minute)},
		{"approved-old-used-recent", old, approval.ApprovalApproved, old.Add(time.Minute), recent},
		{"denied-old", old, approval.ApprovalDenied, old.Add(time.Minute), time.Time{}},
		{"expired-old", old, approval.ApprovalExpired, old.Add(time.Minute), time.Time{}},
		{"denied-recent", old, approval.ApprovalDenied, recent, time.Time{}},
	} {
		a := testApproval(tt.id, tt.created)
		a.Key = tt.id
		a.Expires = tt.created.Add(100 * time.Hour) // decidable whenever
		if err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		if tt.state != approval.ApprovalPending {
			if _, err := s.DecideApproval(ctx, tt.id, tt.state, "alice", "", tt.decided); err != nil {
				t.Fatal(err)
			}
		}
		if !tt.used.IsZero() {
			if a, err := s.UseApproval(ctx, tt.id, old, tt.used, "retry"); err != nil || a == nil {
				t.Fatalf("use %s: %+v, %v", tt.id, a, err)
			}
		}
	}
	recordAll(t, s, bigRecord("r-old", old), bigRecord("r-recent", recent))
	left := func() []string {
		got, err := s.ListApprovals(ctx, approval.ApprovalQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		slices.Sort(ids)
		return ids
	}
	all := left()

	// By size: records go, approvals stay.
	st, err := s.Prune(ctx, Retention{MaxSize: 1, Now: func() time.Time { return now }})
	if err != nil || st.Deleted != 2 || st.Approvals != 0 {
		t.Fatalf("prune by size: %+v, %v", st, err)
	}
	if got := left(); !slices.Equal(got, all) {
		t.Errorf("after pruning by size: %q, want %q", got, all)
	}

	// By age (a day), in batches of one.
	st, err = s.Prune(ctx, Retention{MaxAge: 24 * time.Hour, Batch: 1, Now: func() time.Time { return now }})
	if err != nil || st.Approvals != 4 {
		t.Fatalf("prune by age: %+v, %v", st, err)
	}
	want := []string{"approved-old-used-recent", "denied-recent", "pending-old", "pending-recent"}
	if got := left(); !slices.Equal(got, want) {
		t.Errorf("after pruning by age: %q, want %q", got, want)
	}
}
