package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// RunApprovals runs the approval.ApprovalStore contract tests as subtests of
// t. open must return a new, empty store for each (sub)test t it is given,
// and should register a t.Cleanup that closes it. A store package calls it
// from its own test:
//
//	func TestApprovals(t *testing.T) {
//		storetest.RunApprovals(t, func(t *testing.T) approval.ApprovalStore {
//			s := mystore.Open(t.TempDir()) // closed by t.Cleanup
//			return s
//		})
//	}
//
// The contract checked, beyond the approval.ApprovalStore documentation:
//
//   - every Approval field round-trips through CreateApproval,
//     DecideApproval, SetDecisionRecord and UseApproval; times come back in
//     UTC, truncated to the microsecond, the zero time as zero; a new
//     approval is pending (State "" is stored as pending, any other state,
//     a missing id or an id in use is refused); the store keeps copies;
//   - ListApprovals: newest Created first, then id descending; State,
//     Tenant and Session combine with AND; paging with After visits every
//     approval once, the cursor need not match the filters, an unknown one
//     is audit.ErrUnknownCursor; Limit <= 0 is 100, more than 1000 is
//     1000; the slice is never nil;
//   - DecideApproval: approved, denied and expired, with by, reason and at
//     stored; deciding a decided approval is approval.ErrApprovalDecided and
//     returns it as stored, unchanged; an unknown id is
//     approval.ErrApprovalNotFound; approving or denying at exactly Expires
//     succeeds, after Expires (by even a nanosecond) it expires the approval
//     (DecidedAt at, DecidedReason "approval_timeout", no DecidedBy) and is
//     approval.ErrApprovalDecided; expiring is allowed before Expires; other
//     states and a zero time are refused;
//   - ExpireApprovals expires exactly the pending approvals whose Expires is
//     before at (as above) and returns them, oldest Created first;
//   - UseApproval: only an approved, unused approval with that key, decided
//     at or after notBefore, the earliest decided first, once; none (also an
//     empty key) is (nil, nil);
//   - SetDecisionRecord sets (and replaces) DecisionRecordID;
//   - 16 goroutines deciding one approval, or using one key, or approving
//     while another expires: exactly one wins.
func RunApprovals(t *testing.T, open func(t *testing.T) approval.ApprovalStore) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T) approval.ApprovalStore)
	}{
		{"RoundTrip", testApprovalRoundTrip},
		{"Create", testApprovalCreate},
		{"NotFound", testApprovalNotFound},
		{"Empty", testApprovalsEmpty},
		{"List", testApprovalList},
		{"Paging", testApprovalPaging},
		{"Limit", testApprovalLimit},
		{"Decide", testApprovalDecide},
		{"DecideTwice", testApprovalDecideTwice},
		{"DecideOverdue", testApprovalDecideOverdue},
		{"DecideInvalid", testApprovalDecideInvalid},
		{"Expire", testApprovalExpire},
		{"Use", testApprovalUse},
		{"SetDecisionRecord", testApprovalDecisionRecord},
		{"DecideRace", testApprovalDecideRace},
		{"UseRace", testApprovalUseRace},
		{"DecideExpireRace", testApprovalDecideExpireRace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// approval returns a pending approval created at base+created, expiring 15
// minutes later.
func newApproval(id string, created time.Duration) *approval.Approval {
	at := base.Add(created)
	return &approval.Approval{
		ID: id, State: approval.ApprovalPending, Event: "steps/toolCallRequest",
		Surface: "aos", SessionID: "sess-1", AgentID: "agent-1", Tool: "bash",
		Summary: "bash: rm -rf build/", Reason: "shell needs a human",
		PolicyID: "ask-shell", Created: at, Expires: at.Add(15 * time.Minute),
		RecordID: "rec-" + id, Caller: "agents", Key: "key-" + id,
	}
}

// kept is a as a store keeps it: times in UTC, to the microsecond.
func kept(a *approval.Approval) *approval.Approval {
	c := *a
	c.Created, c.Expires, c.DecidedAt, c.UsedAt = usTime(a.Created), usTime(a.Expires), usTime(a.DecidedAt), usTime(a.UsedAt)
	return &c
}

// checkApproval compares every field of got with want (as kept): times
// with Equal and in UTC.
func checkApproval(t *testing.T, what string, got, want *approval.Approval) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: no approval, want %+v", what, want)
		return
	}
	gv, wv := reflect.ValueOf(*got), reflect.ValueOf(*kept(want))
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if gt, ok := g.(time.Time); ok {
			wt := w.(time.Time)
			if !gt.Equal(wt) || gt.IsZero() != wt.IsZero() {
				t.Errorf("%s: %s = %v, want %v", what, name, gt, wt)
			}
			if !gt.IsZero() && gt.Location() != time.UTC {
				t.Errorf("%s: %s location = %v, want UTC", what, name, gt.Location())
			}
			continue
		}
		if g != w {
			t.Errorf("%s: %s = %#v, want %#v", what, name, g, w)
		}
	}
}

func create(t *testing.T, s approval.ApprovalStore, as ...*approval.Approval) {
	t.Helper()
	for _, a := range as {
		if err := s.CreateApproval(context.Background(), a); err != nil {
			t.Fatalf("CreateApproval(%s): %v", a.ID, err)
		}
	}
}

func get(t *testing.T, s approval.ApprovalStore, id string) *approval.Approval {
	t.Helper()
	a, err := s.Approval(context.Background(), id)
	if err != nil {
		t.Fatalf("Approval(%s): %v", id, err)
	}
	return a
}

func decide(t *testing.T, s approval.ApprovalStore, id string, state approval.ApprovalState, by, reason string, at time.Time) *approval.Approval {
	t.Helper()
	a, err := s.DecideApproval(context.Background(), id, state, by, reason, at)
	if err != nil {
		t.Fatalf("DecideApproval(%s, %s): %v", id, state, err)
	}
	return a
}

func list(t *testing.T, s approval.ApprovalStore, q approval.ApprovalQuery) []approval.Approval {
	t.Helper()
	got, err := s.ListApprovals(context.Background(), q)
	if err != nil {
		t.Fatalf("ListApprovals(%+v): %v", q, err)
	}
	if got == nil {
		t.Errorf("ListApprovals(%+v) = nil, want a non-nil slice", q)
	}
	return got
}

func approvalIDs(as []approval.Approval) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func testApprovalRoundTrip(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	cet := time.FixedZone("CET", 3600)
	want := &approval.Approval{
		ID:        "0193a4f2-7c1e-7d3a-9b2f-2f6c1e0a9d41",
		State:     approval.ApprovalPending,
		Event:     "steps/toolCallRequest",
		Surface:   "aos",
		SessionID: "session-7",
		AgentID:   "agent-42",
		Tool:      "bash",
		Summary:   "bash: rm -rf / ünïcødé ✓ \"quoted\"\n\t<>&'",
		Reason:    "destructive shell commands need a human",
		PolicyID:  "ask-destructive",
		Created:   time.Date(2026, 11, 21, 11, 0, 0, 123456789, cet),
		Expires:   time.Date(2026, 11, 21, 11, 15, 0, 999999999, cet),
		RecordID:  "0193a4f2-7c1e-7d3a-9b2f-000000000001",
		Caller:    "payments-agent ünï",
		Tenant:    "acme",
		Key:       "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Hold:      true,
	}
	create(t, s, want)
	checkApproval(t, "created", get(t, s, want.ID), want)

	// The store keeps copies: changing what was given or got changes
	// nothing stored.
	want.Summary = "changed by the caller"
	got := get(t, s, want.ID)
	got.State = approval.ApprovalApproved
	want.Summary = "bash: rm -rf / ünïcødé ✓ \"quoted\"\n\t<>&'"
	checkApproval(t, "after changing copies", get(t, s, want.ID), want)

	// Through its life, every field gets a value.
	decidedAt := time.Date(2026, 11, 21, 11, 5, 0, 555555555, cet)
	want.State, want.DecidedBy, want.DecidedReason, want.DecidedAt = approval.ApprovalApproved, "alice ünï", "looks fine", decidedAt
	checkApproval(t, "DecideApproval's answer", decide(t, s, want.ID, approval.ApprovalApproved, "alice ünï", "looks fine", decidedAt), want)
	if err := s.SetDecisionRecord(ctx, want.ID, "0193a4f2-7c1e-7d3a-9b2f-000000000002"); err != nil {
		t.Fatal(err)
	}
	want.DecisionRecordID = "0193a4f2-7c1e-7d3a-9b2f-000000000002"
	usedAt := time.Date(2026, 11, 21, 10, 6, 0, 1001, time.UTC)
	used, err := s.UseApproval(ctx, want.Key, decidedAt.Add(-time.Minute), usedAt, "0193a4f2-7c1e-7d3a-9b2f-000000000003")
	if err != nil {
		t.Fatal(err)
	}
	want.UsedAt, want.UsedRecordID = usedAt, "0193a4f2-7c1e-7d3a-9b2f-000000000003"
	checkApproval(t, "UseApproval's answer", used, want)
	final := get(t, s, want.ID)
	checkApproval(t, "stored", final, want)
	v := reflect.ValueOf(*final)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("field %s is still zero: the round trip does not cover it", v.Type().Field(i).Name)
		}
	}
	if ls := list(t, s, approval.ApprovalQuery{}); len(ls) != 1 {
		t.Errorf("ListApprovals: %d approvals, want 1", len(ls))
	} else {
		checkApproval(t, "listed", &ls[0], want)
	}

	// The least approval: an id, nothing else (Hold false, no times).
	least := &approval.Approval{ID: "least"}
	create(t, s, least)
	least.State = approval.ApprovalPending
	checkApproval(t, "least", get(t, s, "least"), least)
}

func testApprovalCreate(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	orig := newApproval("a1", 0)
	create(t, s, orig)
	noState := newApproval("no-state", 0)
	noState.State = ""
	create(t, s, noState)
	if a := get(t, s, "no-state"); a.State != approval.ApprovalPending {
		t.Errorf("created with State \"\": state %q, want pending", a.State)
	}
	dup := newApproval("a1", time.Hour)
	dup.Summary = "another"
	approved := newApproval("approved", 0)
	approved.State = approval.ApprovalApproved
	for _, tt := range []struct {
		name string
		a    *approval.Approval
	}{
		{"nil", nil},
		{"no id", newApproval("", 0)},
		{"not pending", approved},
		{"duplicate id", dup},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.CreateApproval(ctx, tt.a); err == nil {
				t.Errorf("CreateApproval(%+v) = nil, want an error", tt.a)
			}
		})
	}
	checkApproval(t, "the first a1", get(t, s, "a1"), orig)
	if _, err := s.Approval(ctx, "approved"); !errors.Is(err, approval.ErrApprovalNotFound) {
		t.Errorf("a refused approval is stored: %v", err)
	}
	if got := approvalIDs(list(t, s, approval.ApprovalQuery{})); !slices.Equal(got, []string{"no-state", "a1"}) {
		t.Errorf("stored %q, want [no-state a1]", got)
	}
}

func testApprovalNotFound(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	create(t, s, newApproval("a1", 0))
	if a, err := s.Approval(ctx, "nope"); !errors.Is(err, approval.ErrApprovalNotFound) || a != nil {
		t.Errorf("Approval(nope) = %+v, %v; want ErrApprovalNotFound", a, err)
	}
	for _, st := range []approval.ApprovalState{approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired} {
		if a, err := s.DecideApproval(ctx, "nope", st, "alice", "", base); !errors.Is(err, approval.ErrApprovalNotFound) || a != nil {
			t.Errorf("DecideApproval(nope, %s) = %+v, %v; want ErrApprovalNotFound", st, a, err)
		}
	}
	if err := s.SetDecisionRecord(ctx, "nope", "rec"); !errors.Is(err, approval.ErrApprovalNotFound) {
		t.Errorf("SetDecisionRecord(nope) = %v; want ErrApprovalNotFound", err)
	}
	if a, err := s.UseApproval(ctx, "no-such-key", time.Time{}, base, "rec"); a != nil || err != nil {
		t.Errorf("UseApproval(unknown key) = %+v, %v; want nil, nil", a, err)
	}
}

func testApprovalsEmpty(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	if got := list(t, s, approval.ApprovalQuery{}); len(got) != 0 {
		t.Errorf("ListApprovals on an empty store: %d approvals", len(got))
	}
	if got := list(t, s, approval.ApprovalQuery{State: approval.ApprovalPending, Limit: 5}); len(got) != 0 {
		t.Errorf("ListApprovals(pending) on an empty store: %d approvals", len(got))
	}
	got, err := s.ExpireApprovals(context.Background(), base)
	if err != nil || len(got) != 0 {
		t.Errorf("ExpireApprovals on an empty store: %d, %v", len(got), err)
	}
}

// listData creates ten approvals, in id order, whose Created order is
// neither their id order nor their creation order, with ties, and decides
// some. It returns them newest first as ListApprovals must give them.
func listData(t *testing.T, s approval.ApprovalStore) []*approval.Approval {
	minutes := []int{5, 1, 3, 3, 0, 7, 3, 2, 9, 7}
	byID := map[string]*approval.Approval{}
	for i, m := range minutes {
		a := newApproval(fmt.Sprintf("a%d", i), time.Duration(m)*time.Minute)
		a.Tenant = []string{"acme", "beta", ""}[i%3]
		a.SessionID = fmt.Sprintf("s%d", i%2)
		create(t, s, a)
		byID[a.ID] = a
	}
	for _, d := range []struct {
		id    string
		state approval.ApprovalState
	}{{"a1", approval.ApprovalApproved}, {"a3", approval.ApprovalDenied}, {"a5", approval.ApprovalExpired}, {"a7", approval.ApprovalApproved}} {
		a := byID[d.id]
		*a = *decide(t, s, d.id, d.state, "", "", a.Created.Add(time.Second))
	}
	var out []*approval.Approval
	for _, id := range []string{"a8", "a9", "a5", "a0", "a6", "a3", "a2", "a7", "a1", "a4"} {
		out = append(out, byID[id])
	}
	return out
}

// selectIDs returns the ids of the approvals in all that keep returns true
// for, in all's order.
func selectIDs(all []*approval.Approval, keep func(*approval.Approval) bool) []string {
	out := []string{}
	for _, a := range all {
		if keep(a) {
			out = append(out, a.ID)
		}
	}
	return out
}

func testApprovalList(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	all := listData(t, s)
	every := func(*approval.Approval) bool { return true }
	for _, tt := range []struct {
		name string
		q    approval.ApprovalQuery
		want []string
	}{
		{"all newest first", approval.ApprovalQuery{}, []string{"a8", "a9", "a5", "a0", "a6", "a3", "a2", "a7", "a1", "a4"}},
		{"pending", approval.ApprovalQuery{State: approval.ApprovalPending}, []string{"a8", "a9", "a0", "a6", "a2", "a4"}},
		{"approved", approval.ApprovalQuery{State: approval.ApprovalApproved}, []string{"a7", "a1"}},
		{"denied", approval.ApprovalQuery{State: approval.ApprovalDenied}, []string{"a3"}},
		{"expired", approval.ApprovalQuery{State: approval.ApprovalExpired}, []string{"a5"}},
		{"tenant", approval.ApprovalQuery{Tenant: "acme"}, selectIDs(all, func(a *approval.Approval) bool { return a.Tenant == "acme" })},
		{"session", approval.ApprovalQuery{Session: "s1"}, selectIDs(all, func(a *approval.Approval) bool { return a.SessionID == "s1" })},
		{"pending of a tenant", approval.ApprovalQuery{State: approval.ApprovalPending, Tenant: "beta"}, []string{"a4"}},
		{"all three", approval.ApprovalQuery{State: approval.ApprovalPending, Tenant: "acme", Session: "s0"}, []string{"a0", "a6"}},
		{"unknown session", approval.ApprovalQuery{Session: "nope"}, []string{}},
		{"unknown state", approval.ApprovalQuery{State: "bogus"}, []string{}},
		{"limit", approval.ApprovalQuery{Limit: 3}, []string{"a8", "a9", "a5"}},
		{"limit of a filter", approval.ApprovalQuery{State: approval.ApprovalPending, Limit: 2}, []string{"a8", "a9"}},
		{"limit above the count", approval.ApprovalQuery{Limit: 50}, selectIDs(all, every)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := list(t, s, tt.q)
			if ids := approvalIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ListApprovals(%+v) = %q, want %q", tt.q, ids, tt.want)
			}
		})
	}
	// Listed approvals are complete.
	for i, a := range list(t, s, approval.ApprovalQuery{}) {
		checkApproval(t, "listed "+a.ID, &a, all[i])
	}
}

func testApprovalPaging(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	all := listData(t, s)
	for _, qq := range []struct {
		name string
		q    approval.ApprovalQuery
	}{
		{"all", approval.ApprovalQuery{}}, {"pending", approval.ApprovalQuery{State: approval.ApprovalPending}},
		{"tenant", approval.ApprovalQuery{Tenant: "acme"}}, {"session", approval.ApprovalQuery{Session: "s0"}},
	} {
		q := qq.q
		want := list(t, s, q)
		for _, size := range []int{1, 2, 3, 4, 10} {
			t.Run(fmt.Sprintf("%s in pages of %d", qq.name, size), func(t *testing.T) {
				var got []string
				page := q
				page.Limit = size
				for n := 0; ; n++ {
					p := list(t, s, page)
					got = append(got, approvalIDs(p)...)
					if len(p) < size {
						break
					}
					if n > len(all) {
						t.Fatalf("paging does not end: %q", got)
					}
					page.After = p[len(p)-1].ID
				}
				if !slices.Equal(got, approvalIDs(want)) {
					t.Errorf("pages of %d: %q, want %q", size, got, approvalIDs(want))
				}
			})
		}
	}
	for _, tt := range []struct {
		name string
		q    approval.ApprovalQuery
		want []string
	}{
		{"cursor outside the filter", approval.ApprovalQuery{Tenant: "acme", After: "a5"}, []string{"a0", "a6", "a3"}},
		{"cursor in a tie", approval.ApprovalQuery{After: "a6"}, []string{"a3", "a2", "a7", "a1", "a4"}},
		{"last", approval.ApprovalQuery{After: "a4"}, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := approvalIDs(list(t, s, tt.q)); !slices.Equal(got, tt.want) {
				t.Errorf("ListApprovals(%+v) = %q, want %q", tt.q, got, tt.want)
			}
		})
	}
	got, err := s.ListApprovals(context.Background(), approval.ApprovalQuery{After: "nope"})
	if !errors.Is(err, audit.ErrUnknownCursor) || got != nil {
		t.Errorf("ListApprovals(After: nope) = %q, %v; want ErrUnknownCursor", approvalIDs(got), err)
	}
}

func testApprovalLimit(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	const n = 1005
	for i := range n {
		create(t, s, newApproval(fmt.Sprintf("l%04d", i), time.Duration(i)*time.Second))
	}
	for _, tt := range []struct {
		limit, want int
	}{{0, 100}, {-1, 100}, {1, 1}, {999, 999}, {1000, 1000}, {1001, 1000}, {1 << 30, 1000}} {
		got := list(t, s, approval.ApprovalQuery{Limit: tt.limit})
		if len(got) != tt.want {
			t.Errorf("Limit %d: %d approvals, want %d", tt.limit, len(got), tt.want)
		} else if got[0].ID != fmt.Sprintf("l%04d", n-1) {
			t.Errorf("Limit %d: first %s, want the newest", tt.limit, got[0].ID)
		}
	}
}

func testApprovalDecide(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	zone := time.FixedZone("X", -5*3600)
	for i, tt := range []struct {
		name       string
		state      approval.ApprovalState
		by, reason string
		at         time.Duration // after Created; Expires is 15m after
	}{
		{"approve", approval.ApprovalApproved, "alice", "ok", time.Minute},
		{"deny", approval.ApprovalDenied, "bob", "no: rm -rf", time.Minute},
		{"approve at Expires", approval.ApprovalApproved, "alice", "", 15 * time.Minute},
		{"deny at Expires", approval.ApprovalDenied, "", "", 15 * time.Minute},
		{"expire early", approval.ApprovalExpired, "", "withdrawn: the caller hung up", time.Second},
		{"expire", approval.ApprovalExpired, "", "approval_timeout", 16 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newApproval(fmt.Sprintf("d%d", i), 0)
			create(t, s, a)
			at := a.Created.Add(tt.at).Add(789 * time.Nanosecond).In(zone)
			if tt.at == 15*time.Minute {
				at = a.Expires.In(zone)
			}
			want := *a
			want.State, want.DecidedBy, want.DecidedReason, want.DecidedAt = tt.state, tt.by, tt.reason, at
			checkApproval(t, "answer", decide(t, s, a.ID, tt.state, tt.by, tt.reason, at), &want)
			checkApproval(t, "stored", get(t, s, a.ID), &want)
			if !want.Decided() {
				t.Errorf("Decided() = false for %s", want.State)
			}
		})
	}
}

func testApprovalDecideTwice(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	states := []approval.ApprovalState{approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired}
	n := 0
	for _, first := range states {
		for _, second := range states {
			t.Run(fmt.Sprintf("%s then %s", first, second), func(t *testing.T) {
				n++
				a := newApproval(fmt.Sprintf("t%d", n), 0)
				create(t, s, a)
				decided := decide(t, s, a.ID, first, "first", "first reason", a.Created.Add(time.Minute))
				got, err := s.DecideApproval(ctx, a.ID, second, "second", "second reason", a.Created.Add(2*time.Minute))
				if !errors.Is(err, approval.ErrApprovalDecided) {
					t.Fatalf("second DecideApproval: %v, want ErrApprovalDecided", err)
				}
				checkApproval(t, "second answer", got, decided)
				checkApproval(t, "stored", get(t, s, a.ID), decided)
			})
		}
	}
}

func testApprovalDecideOverdue(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	for i, tt := range []struct {
		name  string
		state approval.ApprovalState
		late  time.Duration // after Expires
	}{
		{"approve a µs late", approval.ApprovalApproved, time.Microsecond},
		{"approve a ns late", approval.ApprovalApproved, time.Nanosecond},
		{"deny an hour late", approval.ApprovalDenied, time.Hour},
		{"deny a ns late", approval.ApprovalDenied, time.Nanosecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newApproval(fmt.Sprintf("o%d", i), 0)
			create(t, s, a)
			at := a.Expires.Add(tt.late)
			got, err := s.DecideApproval(ctx, a.ID, tt.state, "alice", "too late", at)
			if !errors.Is(err, approval.ErrApprovalDecided) {
				t.Fatalf("DecideApproval after Expires: %v, want ErrApprovalDecided", err)
			}
			want := *a
			want.State, want.DecidedReason, want.DecidedAt = approval.ApprovalExpired, warden.CodeApprovalTimeout, at
			checkApproval(t, "answer", got, &want)
			checkApproval(t, "stored", get(t, s, a.ID), &want)
			// It is expired already: an expiry sweep does not return it.
			swept, err := s.ExpireApprovals(ctx, at.Add(time.Hour))
			if err != nil || len(swept) != 0 {
				t.Errorf("ExpireApprovals after: %q, %v; want none", approvalIDs(swept), err)
			}
		})
	}
	// Expiring an overdue approval is an ordinary expiry.
	a := newApproval("late-expire", 0)
	create(t, s, a)
	at := a.Expires.Add(time.Minute)
	want := *a
	want.State, want.DecidedReason, want.DecidedAt = approval.ApprovalExpired, "withdrawn", at
	checkApproval(t, "expired late", decide(t, s, a.ID, approval.ApprovalExpired, "", "withdrawn", at), &want)
}

func testApprovalDecideInvalid(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	a := newApproval("a1", 0)
	create(t, s, a)
	for _, tt := range []struct {
		name  string
		state approval.ApprovalState
		at    time.Time
	}{
		{"pending", approval.ApprovalPending, base},
		{"empty state", "", base},
		{"unknown state", "maybe", base},
		{"zero time", approval.ApprovalApproved, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.DecideApproval(ctx, a.ID, tt.state, "alice", "", tt.at)
			if err == nil || errors.Is(err, approval.ErrApprovalDecided) || errors.Is(err, approval.ErrApprovalNotFound) {
				t.Errorf("DecideApproval(%q, %v) = %+v, %v; want an error of its own", tt.state, tt.at, got, err)
			}
		})
	}
	checkApproval(t, "still pending", get(t, s, a.ID), a)
	if _, err := s.UseApproval(ctx, a.Key, base, time.Time{}, "rec"); err == nil {
		t.Errorf("UseApproval at the zero time succeeded")
	}
	if _, err := s.ExpireApprovals(ctx, time.Time{}); err == nil {
		t.Errorf("ExpireApprovals at the zero time succeeded")
	}
}

func testApprovalExpire(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	at := base.Add(time.Hour)
	mk := func(id string, created, expires time.Duration) *approval.Approval {
		a := newApproval(id, created)
		a.Expires = at.Add(expires)
		create(t, s, a)
		return a
	}
	zero := newApproval("p-zero", 4*time.Minute)
	zero.Expires = time.Time{} // the zero time has passed
	create(t, s, zero)
	overdue := []*approval.Approval{
		mk("p-minute", 2*time.Minute, -time.Minute),
		mk("p-micro", time.Minute, -time.Microsecond),
		mk("p-long", 3*time.Minute, -time.Hour),
		zero,
	}
	onTime := mk("p-at", 0, 0)
	later := mk("p-later", 0, time.Minute)
	approved := mk("approved", 0, -time.Hour)
	decide(t, s, approved.ID, approval.ApprovalApproved, "alice", "", approved.Created)
	denied := mk("denied", 0, -time.Hour)
	decide(t, s, denied.ID, approval.ApprovalDenied, "alice", "", denied.Created)

	got, err := s.ExpireApprovals(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	// Oldest Created first: p-micro (1m), p-minute (2m), p-long (3m),
	// p-zero (4m).
	if ids := approvalIDs(got); !slices.Equal(ids, []string{"p-micro", "p-minute", "p-long", "p-zero"}) {
		t.Fatalf("ExpireApprovals = %q, want [p-micro p-minute p-long p-zero]", ids)
	}
	for _, a := range overdue {
		want := *a
		want.State, want.DecidedReason, want.DecidedAt = approval.ApprovalExpired, warden.CodeApprovalTimeout, at
		i := slices.Index(approvalIDs(got), a.ID)
		checkApproval(t, "returned "+a.ID, &got[i], &want)
		checkApproval(t, "stored "+a.ID, get(t, s, a.ID), &want)
	}
	for _, a := range []*approval.Approval{onTime, later} {
		checkApproval(t, "not overdue "+a.ID, get(t, s, a.ID), a)
	}
	if a := get(t, s, "approved"); a.State != approval.ApprovalApproved {
		t.Errorf("an approved approval is now %s", a.State)
	}
	if a := get(t, s, "denied"); a.State != approval.ApprovalDenied {
		t.Errorf("a denied approval is now %s", a.State)
	}
	if got, err := s.ExpireApprovals(ctx, at); err != nil || len(got) != 0 {
		t.Errorf("second ExpireApprovals = %q, %v; want none", approvalIDs(got), err)
	}
	got, err = s.ExpireApprovals(ctx, at.Add(time.Minute).Add(time.Nanosecond))
	if ids := approvalIDs(got); err != nil || !slices.Equal(ids, []string{"p-at", "p-later"}) {
		t.Errorf("ExpireApprovals a minute later = %q, %v; want [p-at p-later]", ids, err)
	}
}

func testApprovalUse(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	ctx := context.Background()
	decidedAt := base.Add(time.Minute)
	usedAt := base.Add(5 * time.Minute)
	for _, tt := range []struct {
		name      string
		state     approval.ApprovalState // of the one approval, "key-a1"
		key       string                 // to use
		notBefore time.Time
		wantUsed  bool
	}{
		{"approved", approval.ApprovalApproved, "key-a1", base, true},
		{"approved, notBefore zero", approval.ApprovalApproved, "key-a1", time.Time{}, true},
		{"approved at notBefore", approval.ApprovalApproved, "key-a1", decidedAt, true},
		{"approved before notBefore", approval.ApprovalApproved, "key-a1", decidedAt.Add(time.Microsecond), false},
		{"approved a ns before notBefore", approval.ApprovalApproved, "key-a1", decidedAt.Add(time.Nanosecond), false},
		{"other key", approval.ApprovalApproved, "key-a2", base, false},
		{"empty key", approval.ApprovalApproved, "", base, false},
		{"pending", approval.ApprovalPending, "key-a1", base, false},
		{"denied", approval.ApprovalDenied, "key-a1", base, false},
		{"expired", approval.ApprovalExpired, "key-a1", base, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			a := newApproval("a1", 0)
			if tt.key == "" {
				a.Key = ""
			}
			create(t, s, a)
			want := *a
			if tt.state != approval.ApprovalPending {
				want = *decide(t, s, a.ID, tt.state, "alice", "", decidedAt)
			}
			got, err := s.UseApproval(ctx, tt.key, tt.notBefore, usedAt, "retry-1")
			if err != nil {
				t.Fatal(err)
			}
			if !tt.wantUsed {
				if got != nil {
					t.Errorf("UseApproval = %+v, want none", got)
				}
				checkApproval(t, "unused", get(t, s, a.ID), &want)
				return
			}
			want.UsedAt, want.UsedRecordID = usedAt, "retry-1"
			checkApproval(t, "used", got, &want)
			checkApproval(t, "stored", get(t, s, a.ID), &want)
			// Only once.
			again, err := s.UseApproval(ctx, tt.key, tt.notBefore, usedAt.Add(time.Second), "retry-2")
			if err != nil || again != nil {
				t.Errorf("second UseApproval = %+v, %v; want none", again, err)
			}
			checkApproval(t, "stored after a second use", get(t, s, a.ID), &want)
		})
	}
	t.Run("several with one key", func(t *testing.T) {
		s := open(t)
		for i, d := range []time.Duration{3 * time.Minute, time.Minute, 2 * time.Minute, 4 * time.Minute} {
			a := newApproval(fmt.Sprintf("k%d", i), 0)
			a.Key = "shared"
			create(t, s, a)
			if i < 3 {
				decide(t, s, a.ID, approval.ApprovalApproved, "alice", "", base.Add(d))
			}
		}
		// k1 (decided 1m) is too old; then the earliest decided first.
		var got []string
		for range 3 {
			a, err := s.UseApproval(ctx, "shared", base.Add(90*time.Second), usedAt, "retry")
			if err != nil {
				t.Fatal(err)
			}
			if a != nil {
				got = append(got, a.ID)
			}
		}
		if !slices.Equal(got, []string{"k2", "k0"}) {
			t.Errorf("used %q, want [k2 k0]", got)
		}
	})
}

func testApprovalDecisionRecord(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	ctx := context.Background()
	a := newApproval("a1", 0)
	create(t, s, a)
	want := *decide(t, s, a.ID, approval.ApprovalDenied, "bob", "no", base.Add(time.Minute))
	for _, rec := range []string{"rec-decision", "rec-other"} {
		if err := s.SetDecisionRecord(ctx, a.ID, rec); err != nil {
			t.Fatal(err)
		}
		want.DecisionRecordID = rec
		checkApproval(t, "after SetDecisionRecord", get(t, s, a.ID), &want)
	}
}

// race runs fn(i) on 16 goroutines released together.
func race(fn func(i int)) {
	const n = 16
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

func testApprovalDecideRace(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	a := newApproval("a1", 0)
	create(t, s, a)
	var mu sync.Mutex
	var wins []*approval.Approval
	var lost []*approval.Approval
	race(func(i int) {
		state := []approval.ApprovalState{approval.ApprovalApproved, approval.ApprovalDenied}[i%2]
		got, err := s.DecideApproval(context.Background(), a.ID, state, fmt.Sprint("approver-", i), "", base.Add(time.Minute))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			wins = append(wins, got)
		case errors.Is(err, approval.ErrApprovalDecided):
			lost = append(lost, got)
		default:
			t.Errorf("approver %d: %v", i, err)
		}
	})
	if len(wins) != 1 {
		t.Fatalf("%d DecideApprovals succeeded, want exactly 1", len(wins))
	}
	checkApproval(t, "stored", get(t, s, a.ID), wins[0])
	for _, l := range lost {
		checkApproval(t, "a loser's answer", l, wins[0])
	}
}

func testApprovalUseRace(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d approved", n), func(t *testing.T) {
			s := open(t)
			for i := range n {
				a := newApproval(fmt.Sprintf("a%d", i), 0)
				a.Key = "retry-key"
				create(t, s, a)
				decide(t, s, a.ID, approval.ApprovalApproved, "alice", "", base.Add(time.Minute))
			}
			var mu sync.Mutex
			winners := map[string]string{} // approval id → record id
			race(func(i int) {
				rec := fmt.Sprint("retry-", i)
				got, err := s.UseApproval(context.Background(), "retry-key", base, base.Add(2*time.Minute), rec)
				if err != nil {
					t.Errorf("retry %d: %v", i, err)
					return
				}
				if got == nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if prev, ok := winners[got.ID]; ok {
					t.Errorf("%s used twice: by %s and %s", got.ID, prev, rec)
				}
				winners[got.ID] = rec
			})
			if len(winners) != n {
				t.Fatalf("%d approvals used, want %d", len(winners), n)
			}
			for id, rec := range winners {
				if a := get(t, s, id); a.UsedRecordID != rec {
					t.Errorf("%s: UsedRecordID %q, want the winner's %q", id, a.UsedRecordID, rec)
				}
			}
		})
	}
}

// testApprovalDecideExpireRace approves (at Expires, still in time) while
// sweepers expire (a µs later): exactly one of them gets the approval.
func testApprovalDecideExpireRace(t *testing.T, open func(*testing.T) approval.ApprovalStore) {
	s := open(t)
	a := newApproval("a1", 0)
	create(t, s, a)
	var mu sync.Mutex
	approved, expired := 0, 0
	race(func(i int) {
		ctx := context.Background()
		if i%2 == 0 {
			_, err := s.DecideApproval(ctx, a.ID, approval.ApprovalApproved, "alice", "", a.Expires)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				approved++
			case !errors.Is(err, approval.ErrApprovalDecided):
				t.Errorf("approve: %v", err)
			}
			return
		}
		got, err := s.ExpireApprovals(ctx, a.Expires.Add(time.Microsecond))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("expire: %v", err)
		}
		expired += len(got)
	})
	if approved+expired != 1 {
		t.Fatalf("approved %d times and expired %d times, want one of them once", approved, expired)
	}
	want := approval.ApprovalApproved
	if expired == 1 {
		want = approval.ApprovalExpired
	}
	if got := get(t, s, a.ID); got.State != want {
		t.Errorf("stored state %s, want %s", got.State, want)
	}
}
