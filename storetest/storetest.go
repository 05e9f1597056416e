// Package storetest is the contract test suite every audit.Store must pass.
// A store package calls Run from its own test:
//
//	func TestStore(t *testing.T) {
//		dirs := map[*testing.T]string{}
//		storetest.Run(t, func(t *testing.T) audit.Store {
//			dir, ok := dirs[t]
//			if !ok {
//				dir = t.TempDir()
//				dirs[t] = dir
//			}
//			s, err := mystore.Open(dir)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Run runs the Store contract tests as subtests of t.
//
// open must return an open store for the subtest t it is given. The first
// call for a given t must return an empty store. A second call with the same
// t, made after the subtest has closed the first store, must open the SAME
// store again (same directory, database or schema): that is how the suite
// checks that records survive Close. open should register a t.Cleanup that
// closes the store; the suite may already have closed it, so Close must be
// idempotent.
//
// Subtests do not run in parallel. The contract checked, beyond the
// audit.Store documentation:
//
//   - every Record field round-trips; Time comes back in UTC with (at most)
//     microsecond precision; Input, Output and Views come back as equivalent
//     JSON; Results is never nil; empty ReasonCodes, Output and Views come
//     back empty; Sealed comes back byte for byte, nil when the record had
//     none, and is the store's copy (changing the caller's bytes after
//     Record, or the scanned record's, changes no stored record);
//   - Scan visits records in recording order (not Time order), newest first
//     or, with Oldest, oldest first; Query fields combine with AND; Since is
//     inclusive and Until exclusive; Tool is exact, Text as
//     audit.TextMatcher says (any case, the small fields and Input);
//   - paging with After, in pages of any size and either order, visits every
//     record once, also while records are being recorded; an unknown After
//     fails with audit.ErrUnknownCursor;
//   - ID finds one record (none for an unknown id or another tenant's);
//   - a Budget too short to finish stops a scan with a *audit.ScanStopped
//     that has progressed, and resuming after it visits the rest exactly;
//   - Scan stops when fn returns false, and returns ctx.Err() once ctx is
//     done; fn may call Record (Scan holds no lock while fn runs);
//   - Scan on an empty store visits nothing and succeeds;
//   - concurrent Records are all stored;
//   - Record after Close returns an error; Close twice does not panic;
//   - Record with a done context returns promptly with an error wrapping
//     the context's error, and the record is not stored;
//   - a Record that returned nil is stored after Close and reopen, one that
//     returned an error is not, and Close while Records are in flight makes
//     every one of them return.
func Run(t *testing.T, open func(t *testing.T) audit.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T) audit.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"MinimalRecord", testMinimal},
		{"Sealed", testSealed},
		{"TimePrecision", testTimePrecision},
		{"Order", testOrder},
		{"Filters", testFilters},
		{"Paging", testPaging},
		{"PagingWhileRecording", testPagingConcurrent},
		{"ByID", testByID},
		{"Budget", testBudget},
		{"UnknownCursor", testUnknownCursor},
		{"EarlyStop", testEarlyStop},
		{"ContextDone", testScanContext},
		{"RecordDuringScan", testRecordDuringScan},
		{"Collect", testCollect},
		{"Empty", testEmpty},
		{"Concurrent", testConcurrent},
		{"RecordAfterClose", testRecordAfterClose},
		{"DoneContext", testDoneContext},
		{"CloseFlushes", testCloseFlushes},
		{"CloseWithRecordsInFlight", testCloseInFlight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

var base = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// rec returns a small valid record.
func rec(id string, at time.Time) *audit.Record {
	return &audit.Record{
		ID: id, Time: at, Event: "steps/toolCallRequest", Surface: "aos",
		RequestID: "req-" + id, AgentID: "agent-1", SessionID: "sess-1",
		TurnID: "turn-1", StepID: "step-" + id, Decision: "allow",
		Results: []warden.Result{{Guardian: "policy", Decision: "allow", Mode: "enforce", LatencyUS: 3}},
		Input:   json.RawMessage(`{"tool":"bash","args":{"cmd":"ls"}}`),
	}
}

// within runs fn and fails the test if it does not return within d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func record(t *testing.T, s audit.Store, r *audit.Record) {
	t.Helper()
	if err := s.Record(context.Background(), r); err != nil {
		t.Fatalf("Record(%s): %v", r.ID, err)
	}
}

// scan returns every record Scan visits for q.
func scan(t *testing.T, s audit.Store, q audit.Query) []audit.Record {
	t.Helper()
	got := []audit.Record{}
	err := s.Scan(context.Background(), q, func(r *audit.Record) bool {
		got = append(got, *r)
		return true
	})
	if err != nil {
		t.Fatalf("Scan(%+v): %v", q, err)
	}
	return got
}

// scanIDs returns the ids of the records Scan visits for q.
func scanIDs(t *testing.T, s audit.Store, q audit.Query) []string {
	t.Helper()
	return ids(scan(t, s, q))
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func ids(rs []audit.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// sameJSON reports whether a and b encode the same JSON value (key order,
// whitespace and number spelling aside).
func sameJSON(a, b []byte) (bool, error) {
	var x, y any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	if err := da.Decode(&x); err != nil {
		return false, fmt.Errorf("decode %q: %w", a, err)
	}
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := db.Decode(&y); err != nil {
		return false, fmt.Errorf("decode %q: %w", b, err)
	}
	return reflect.DeepEqual(normNumbers(x), normNumbers(y)), nil
}

// normNumbers turns json.Numbers into float64 so 1.50 and 1.5 compare equal
// (JSONB stores may respell numbers).
func normNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = normNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normNumbers(e)
		}
	}
	return v
}

// checkEqual compares a stored record with the one recorded.
func checkEqual(t *testing.T, got, want *audit.Record) {
	t.Helper()
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"ID", got.ID, want.ID},
		{"Event", got.Event, want.Event},
		{"Surface", got.Surface, want.Surface},
		{"Direction", got.Direction, want.Direction},
		{"RequestID", got.RequestID, want.RequestID},
		{"AgentID", got.AgentID, want.AgentID},
		{"SessionID", got.SessionID, want.SessionID},
		{"TurnID", got.TurnID, want.TurnID},
		{"StepID", got.StepID, want.StepID},
		{"Decision", got.Decision, want.Decision},
		{"Reason", got.Reason, want.Reason},
		{"PolicyID", got.PolicyID, want.PolicyID},
		{"PolicyVersion", got.PolicyVersion, want.PolicyVersion},
		{"PolicyRevision", got.PolicyRevision, want.PolicyRevision},
		{"LatencyUS", got.LatencyUS, want.LatencyUS},
		{"Caller", got.Caller, want.Caller},
		{"Tenant", got.Tenant, want.Tenant},
		{"ApprovalID", got.ApprovalID, want.ApprovalID},
		{"Tool", got.Tool, want.Tool},
	} {
		if f.got != f.want {
			t.Errorf("%s = %#v, want %#v", f.name, f.got, f.want)
		}
	}
	if !got.Time.Equal(want.Time) {
		t.Errorf("Time = %v, want %v", got.Time, want.Time)
	}
	if got.Time.Location() != time.UTC {
		t.Errorf("Time location = %v, want UTC", got.Time.Location())
	}
	if len(want.ReasonCodes) == 0 {
		if len(got.ReasonCodes) != 0 {
			t.Errorf("ReasonCodes = %q, want none", got.ReasonCodes)
		}
	} else if !slices.Equal(got.ReasonCodes, want.ReasonCodes) {
		t.Errorf("ReasonCodes = %q, want %q", got.ReasonCodes, want.ReasonCodes)
	}
	if got.Results == nil {
		t.Errorf("Results is nil, want a non-nil slice")
	}
	if len(want.Results) == 0 {
		if len(got.Results) != 0 {
			t.Errorf("Results = %+v, want none", got.Results)
		}
	} else if !reflect.DeepEqual(got.Results, want.Results) {
		t.Errorf("Results = %+v\nwant %+v", got.Results, want.Results)
	}
	for _, f := range []struct {
		name      string
		got, want json.RawMessage
	}{{"Input", got.Input, want.Input}, {"Output", got.Output, want.Output}, {"Views", got.Views, want.Views}} {
		if len(f.want) == 0 {
			if len(f.got) != 0 {
				t.Errorf("%s = %s, want empty", f.name, f.got)
			}
			continue
		}
		same, err := sameJSON(f.got, f.want)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
		} else if !same {
			t.Errorf("%s = %s, want %s", f.name, f.got, f.want)
		}
	}
	// Sealed is what the hash chain covers: the bytes, not the JSON value.
	switch {
	case len(want.Sealed) == 0 && got.Sealed != nil:
		t.Errorf("Sealed = %q, want nil (the record had none)", got.Sealed)
	case !bytes.Equal(got.Sealed, want.Sealed):
		t.Errorf("Sealed = %q, want %q byte for byte", got.Sealed, want.Sealed)
	}
}

func testRoundTrip(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	cet := time.FixedZone("CET", 3600)
	want := &audit.Record{
		ID:            "0193a4f2-7c1e-7d3a-9b2f-2f6c1e0a9d41",
		Time:          time.Date(2026, 11, 21, 11, 0, 0, 123456000, cet),
		Event:         "steps/toolCallRequest",
		Surface:       "aos",
		Direction:     "inbound",
		RequestID:     "13fa8d6f-1111-4a2b-8c3d-000000000001",
		AgentID:       "agent-42",
		SessionID:     "session-7",
		TurnID:        "turn-3",
		StepID:        "step-9",
		Decision:      "deny",
		Reason:        "blocked: \"rm -rf /\" is destructive\n\tünïcødé ✓ 🚫 <>&'",
		ReasonCodes:   []string{"no-destructive-shell", "approval_required"},
		PolicyID:      "no-destructive-shell",
		PolicyVersion: "v3",
		Results: []warden.Result{
			{Guardian: "policy", PolicyID: "no-destructive-shell", PolicyVersion: "v3",
				Decision: "deny", Mode: "enforce", Reason: "destructive", LatencyUS: 12},
			{Guardian: "policy", PolicyID: "log-all", PolicyVersion: "v1",
				Decision: "allow", Mode: "audit", Reason: "would allow", LatencyUS: 4},
			{Guardian: "pii", Decision: "", Mode: "enforce", LatencyUS: 250000, Error: "timeout after 250ms"},
		},
		LatencyUS: 35,
		Input: json.RawMessage(`{"tool": "bash",
			"args": {"cmd": "rm -rf /", "env": {"A": "1"}},
			"list": [1, 2.5, -3e2, true, false, null, "x\u00e9\"\\"],
			"empty": {}, "none": []}`),
		Output:         json.RawMessage(`{"tool":"bash","args":{"cmd":"echo refused"}}`),
		PolicyRevision: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Views: json.RawMessage(`{"tool": {"name": "bash", "args": {"cmd": "rm -rf /"}},
			"text": "rm -rf / ünïcødé", "n": [1, 2.5, null]}`),
		Caller:     "payments-agent ünï",
		Tenant:     "acme",
		ApprovalID: "01a20aa2-a923-756e-98d0-7fd70ec87c95",
		Tool:       "bash ✓",
	}
	record(t, s, want)
	got := scan(t, s, audit.Query{})
	if len(got) != 1 {
		t.Fatalf("Scan visited %d records, want 1", len(got))
	}
	checkEqual(t, &got[0], want)
}

func testMinimal(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	want := &audit.Record{
		ID: "minimal", Time: base, Event: "e", Decision: "allow",
		Results: []warden.Result{}, Input: json.RawMessage(`{}`),
	}
	record(t, s, want)
	got := scan(t, s, audit.Query{})
	if len(got) != 1 {
		t.Fatalf("Scan visited %d records, want 1", len(got))
	}
	checkEqual(t, &got[0], want)
}

// sealedValue is a record's sealed originals as the redactor writes them:
// a JSON object from mark to envelope (unpadded base64url), members sorted.
// The spacing and member order are part of what must come back.
var sealedValue = json.RawMessage(`{"email:e87ea35c":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQ-_Wq3v","secret:0badc0de":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8"}`)

// testSealed: a record's sealed originals round-trip byte for byte and a
// record without has nil Sealed, also after Close and reopen; the store
// keeps its own copy (changing the caller's bytes after Record, or a
// scanned record's, changes nothing stored).
func testSealed(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	with := rec("sealed", base)
	with.Input = json.RawMessage(`{"to":"[REDACTED:email:e87ea35c]","key":"[REDACTED:secret:0badc0de]"}`)
	with.Sealed = slices.Clone(sealedValue)
	odd := rec("sealed-odd", base.Add(time.Second)) // not what the redactor writes: the bytes still are what comes back
	odd.Sealed = json.RawMessage(" {\"b\": \"x\",\n \"a\":\"\\u00e9\"} ")
	without := rec("unsealed", base.Add(2*time.Second))
	empty := rec("sealed-empty", base.Add(3*time.Second))
	empty.Sealed = json.RawMessage{} // empty: none
	want := map[string]*audit.Record{}
	for _, r := range []*audit.Record{with, odd, without, empty} {
		record(t, s, r)
		c := *r
		c.Sealed = slices.Clone(r.Sealed)
		want[r.ID] = &c
	}
	// The caller may reuse its buffer once Record has returned.
	for i := range with.Sealed {
		with.Sealed[i] = 'x'
	}
	want["sealed-empty"].Sealed = nil
	check := func(when string) {
		t.Helper()
		got := scan(t, s, audit.Query{Oldest: true})
		if g := ids(got); !slices.Equal(g, []string{"sealed", "sealed-odd", "unsealed", "sealed-empty"}) {
			t.Fatalf("%s: Scan = %q", when, g)
		}
		for i := range got {
			checkEqual(t, &got[i], want[got[i].ID])
		}
		// fn owns what it is given: changing it changes nothing stored.
		for i := range got[0].Sealed {
			got[0].Sealed[i] = 'y'
		}
		again := scan(t, s, audit.Query{ID: "sealed"})
		if len(again) != 1 {
			t.Fatalf("%s: Query{ID: sealed} found %d records", when, len(again))
		}
		if !bytes.Equal(again[0].Sealed, sealedValue) {
			t.Errorf("%s: after changing a scanned record's Sealed, the stored one is %q", when, again[0].Sealed)
		}
	}
	check("recorded")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t)
	check("after Close and reopen")
}

func testTimePrecision(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.FixedZone("X", -5*3600))
	record(t, s, rec("nanos", at))
	got := scan(t, s, audit.Query{})
	if len(got) != 1 {
		t.Fatalf("Scan visited %d records, want 1", len(got))
	}
	gt := got[0].Time
	if d := gt.Sub(at); d <= -time.Microsecond || d >= time.Microsecond {
		t.Errorf("Time = %v, want %v to the microsecond", gt, at)
	}
	if gt.Nanosecond()%1000 != 0 {
		t.Errorf("Time = %v has sub-microsecond digits", gt)
	}
	if gt.Location() != time.UTC {
		t.Errorf("Time location = %v, want UTC", gt.Location())
	}
}

// recordMany records n records concurrently (times base+i ms) and returns
// their ids oldest first.
func recordMany(t *testing.T, s audit.Store, prefix string, n, workers int) []string {
	t.Helper()
	all := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				id := fmt.Sprintf("%s-%05d", prefix, i)
				all[i] = id
				r := rec(id, base.Add(time.Duration(i)*time.Millisecond))
				r.SessionID = fmt.Sprintf("sess-%d", w)
				if err := s.Record(context.Background(), r); err != nil {
					errs <- fmt.Errorf("Record(%s): %w", id, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	return all
}

func testConcurrent(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	const goroutines, each = 50, 20
	var all []string
	within(t, 2*time.Minute, "1000 concurrent Records", func() {
		all = recordMany(t, s, "conc", goroutines*each, goroutines)
	})
	got := scanIDs(t, s, audit.Query{})
	slices.Sort(got)
	if !slices.Equal(got, all) { // all is sorted: ids are zero-padded
		t.Errorf("after %d concurrent Records, Scan visits %d records", len(all), len(got))
	}
	// Each goroutine used its own session.
	if got := scan(t, s, audit.Query{Session: "sess-7"}); len(got) != each {
		t.Errorf("session sess-7 has %d records, want %d", len(got), each)
	}
}

func testRecordAfterClose(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	record(t, s, rec("before", base))
	within(t, 30*time.Second, "Close", func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	within(t, 5*time.Second, "Record after Close", func() {
		if err := s.Record(context.Background(), rec("after", base)); err == nil {
			t.Errorf("Record after Close returned nil, want an error")
		}
	})
	within(t, 5*time.Second, "second Close", func() { _ = s.Close() })
	s = open(t)
	if got := scanIDs(t, s, audit.Query{}); !slices.Equal(got, []string{"before"}) {
		t.Errorf("after reopen, Scan = %q, want [before]", got)
	}
}

func testDoneContext(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"canceled", canceled, context.Canceled},
		{"deadline", expired, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			start := time.Now()
			within(t, 5*time.Second, "Record with a done context", func() {
				err = s.Record(tt.ctx, rec("ctx-"+tt.name, base))
			})
			if err == nil {
				t.Fatalf("Record with a %s context returned nil", tt.name)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Record error %q does not wrap %v", err, tt.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Record with a done context took %v", d)
			}
		})
	}
	// An error means not recorded; the store still works.
	record(t, s, rec("ok", base))
	if got := scanIDs(t, s, audit.Query{}); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("Scan = %q, want [ok] (records whose Record failed must not be stored)", got)
	}
}

func testCloseFlushes(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	const n = 20
	var want []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("flush-%02d", i)
		record(t, s, rec(id, base.Add(time.Duration(i)*time.Second)))
		want = append(want, id)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t)
	got := scanIDs(t, s, audit.Query{})
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("after Close and reopen, Scan = %q, want %q", got, want)
	}
}

func testCloseInFlight(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	const n = 200
	errs := make([]error, n)
	var started, wg sync.WaitGroup
	started.Add(n)
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			started.Done()
			errs[i] = s.Record(context.Background(), rec(fmt.Sprintf("inflight-%03d", i), base.Add(time.Duration(i)*time.Millisecond)))
		}()
	}
	started.Wait()
	within(t, time.Minute, "Close with Records in flight", func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	within(t, 10*time.Second, "Records in flight at Close", wg.Wait)

	s = open(t)
	stored := map[string]bool{}
	for _, id := range scanIDs(t, s, audit.Query{}) {
		stored[id] = true
	}
	ok := 0
	for i, err := range errs {
		id := fmt.Sprintf("inflight-%03d", i)
		switch {
		case err == nil && !stored[id]:
			t.Errorf("Record(%s) returned nil but it is not stored after Close", id)
		case err != nil && stored[id]:
			t.Errorf("Record(%s) returned %q but it is stored", id, err)
		case err == nil:
			ok++
		}
	}
	t.Logf("%d of %d in-flight Records were committed by Close, %d refused", ok, n, n-ok)
}

// usTime is t as a store keeps it: UTC, to the microsecond.
func usTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Microsecond).UTC()
}
