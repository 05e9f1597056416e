package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// The Scan half of the contract: order, filters, paging, stopping.

func testOrder(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	// Recorded out of time order, and with equal times: Scan follows the
	// recording order, never Time.
	var recorded []string
	for _, i := range []int{2, 0, 4, 1, 3} {
		id := fmt.Sprintf("t%d", i)
		record(t, s, rec(id, base.Add(time.Duration(i)*time.Millisecond)))
		recorded = append(recorded, id)
	}
	for _, id := range []string{"tie-a", "tie-b", "tie-c"} {
		record(t, s, rec(id, base.Add(time.Hour)))
		recorded = append(recorded, id)
	}
	record(t, s, rec("past", base.Add(-time.Hour)))
	recorded = append(recorded, "past")
	for _, tt := range []struct {
		name string
		q    audit.Query
		want []string
	}{
		{"newest first", audit.Query{}, reversed(recorded)},
		{"oldest first", audit.Query{Oldest: true}, recorded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := scanIDs(t, s, tt.q); !slices.Equal(got, tt.want) {
				t.Errorf("Scan(%+v) order = %q, want %q", tt.q, got, tt.want)
			}
		})
	}
}

// filterData records 24 records that differ in every field a Query
// filters on, in an order unrelated to their Time, and returns them in
// recording order.
func filterData(t *testing.T, s audit.Store) []*audit.Record {
	var all []*audit.Record
	n := 0
	for _, sess := range []string{"s1", "s2"} {
		for _, ev := range []string{"steps/toolCallRequest", "steps/toolCallResult"} {
			for _, dec := range []string{"allow", "deny", "modify"} {
				for k := 0; k < 2; k++ {
					r := rec(fmt.Sprintf("f%02d", n), base.Add(time.Duration(n)*time.Second))
					r.SessionID, r.Event, r.Decision = sess, ev, dec
					r.Surface = []string{"aos", "mcp", "a2a"}[n%3]
					r.AgentID = []string{"agent-a", "agent-b"}[(n/3)%2]
					r.Tenant = []string{"", "acme", "beta"}[(n/2)%3]
					r.Tool = []string{"", "bash", "send_email", "Read_File"}[(n/5)%4]
					if dec != "allow" {
						r.PolicyID = []string{"p1", "p2"}[n%2]
						r.Reason = []string{"Blocked by policy", "needs approval: ÜBER-secret"}[(n/4)%2]
					}
					if sh := []string{"", "allow", "deny", ""}[n%4]; sh != "" { // decided beside a shadow set
						r.Results = append(r.Results,
							warden.Result{Guardian: warden.GuardianShadow, PolicyID: "cand", Decision: sh, Mode: warden.ModeShadow},
							warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Decision: sh, Mode: warden.ModeShadow})
					}
					r.Input = json.RawMessage(fmt.Sprintf(`{"tool":%q,"args":{"path":"/srv/Report-%d.PDF","note":"caf\u00e9 Straße"}}`, r.Tool, n%6))
					all = append(all, r)
					n++
				}
			}
		}
	}
	var recorded []*audit.Record
	for i := range all {
		r := all[(i*7)%len(all)]
		record(t, s, r)
		recorded = append(recorded, r)
	}
	return recorded
}

func testFilters(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recorded := filterData(t, s)
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	for _, tt := range []struct {
		name string
		q    audit.Query
	}{
		{"none", audit.Query{}},
		{"session", audit.Query{Session: "s1"}},
		{"event", audit.Query{Event: "steps/toolCallResult"}},
		{"decision", audit.Query{Decision: "deny"}},
		{"surface", audit.Query{Surface: "mcp"}},
		{"policy", audit.Query{Policy: "p2"}},
		{"agent", audit.Query{Agent: "agent-b"}},
		{"tenant", audit.Query{Tenant: "acme"}},
		{"tenant+decision", audit.Query{Tenant: "beta", Decision: "deny"}},
		{"since", audit.Query{Since: at(30)}},                          // inclusive
		{"until", audit.Query{Until: at(10)}},                          // exclusive
		{"since+until", audit.Query{Since: at(5), Until: at(17)}},      // [5, 17)
		{"since=until", audit.Query{Since: at(5), Until: at(5)}},       // empty
		{"since in sub-second", audit.Query{Since: at(5).Add(1)}},      // 5 excluded
		{"until in sub-second", audit.Query{Until: at(5).Add(1)}},      // 5 included
		{"since after all", audit.Query{Since: at(1000)}},              // none
		{"until before all", audit.Query{Until: base.Add(-time.Hour)}}, // none
		{"session+event", audit.Query{Session: "s2", Event: "steps/toolCallRequest"}},
		{"session+decision", audit.Query{Session: "s1", Decision: "modify"}},
		{"surface+agent", audit.Query{Surface: "aos", Agent: "agent-a"}},
		{"policy+decision", audit.Query{Policy: "p1", Decision: "deny"}},
		{"session+since+until", audit.Query{Session: "s2", Since: at(20), Until: at(40)}},
		{"all", audit.Query{Session: "s2", Event: "steps/toolCallResult", Decision: "deny",
			Surface: "aos", Policy: "p1", Agent: "agent-a", Since: at(1), Until: at(100)}},
		{"no match", audit.Query{Session: "nope"}},
		{"no match combined", audit.Query{Session: "s1", Event: "nope"}},
		{"policy of allows", audit.Query{Policy: "p1", Decision: "allow"}},
		{"tool", audit.Query{Tool: "send_email"}},
		{"tool is case-sensitive", audit.Query{Tool: "read_file"}},
		{"tool+decision", audit.Query{Tool: "bash", Decision: "deny"}},
		{"text in reason, any case", audit.Query{Text: "BLOCKED"}},
		{"text in reason, non-ASCII case", audit.Query{Text: "über-SECRET"}},
		{"text in event", audit.Query{Text: "callresult"}},
		{"text in tool", audit.Query{Text: "read_f"}},
		{"text in session", audit.Query{Text: "S2"}},
		{"text in agent", audit.Query{Text: "agent-B"}},
		{"text in policy", audit.Query{Text: "p2"}},
		{"text in input", audit.Query{Text: "report-3.pdf"}},
		{"text in input, as stored JSON", audit.Query{Text: `caf\u00E9`}},
		{"text in input is not unescaped", audit.Query{Text: "café"}},
		{"text in input, non-ASCII", audit.Query{Text: "STRASSE"}},
		{"text in input, non-ASCII lower", audit.Query{Text: "straße"}},
		{"text+filters", audit.Query{Text: "report-5", Session: "s2", Decision: "modify"}},
		{"text matches nothing", audit.Query{Text: "no such text"}},
		{"text of the tenant only", audit.Query{Text: "bash", Tenant: "acme"}},
		{"shadow disagrees", audit.Query{ShadowDisagrees: true}},
		{"shadow disagrees+decision", audit.Query{ShadowDisagrees: true, Decision: "modify"}},
		{"shadow disagrees+text", audit.Query{ShadowDisagrees: true, Text: "report-1"}},
	} {
		for _, oldest := range []bool{false, true} {
			q := tt.q
			q.Oldest = oldest
			t.Run(fmt.Sprintf("%s/oldest=%v", tt.name, oldest), func(t *testing.T) {
				want := wantIDs(recorded, q)
				if got := scanIDs(t, s, q); !slices.Equal(got, want) {
					t.Errorf("Scan(%+v) = %q, want %q", q, got, want)
				}
			})
		}
	}
}

// matches reports whether r matches q's fields, Text aside: the suite's
// own account of the filters (Mem uses audit.Query.Matcher), against which
// every store, Mem included, is checked.
func matches(r *audit.Record, q *audit.Query) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return eq(q.ID, r.ID) && eq(q.Session, r.SessionID) && eq(q.Event, r.Event) && eq(q.Decision, r.Decision) &&
		eq(q.Surface, r.Surface) && eq(q.Policy, r.PolicyID) && eq(q.Agent, r.AgentID) && eq(q.Tenant, r.Tenant) &&
		eq(q.Tool, r.Tool) && (!q.ShadowDisagrees || shadowDisagrees(r)) &&
		(q.Since.IsZero() || !r.Time.Before(q.Since)) && (q.Until.IsZero() || r.Time.Before(q.Until))
}

// shadowDisagrees is the suite's own account of Record.ShadowDisagrees: a
// shadow summary result whose decision is not the record's.
func shadowDisagrees(r *audit.Record) bool {
	for _, res := range r.Results {
		if res.Kind == warden.KindShadowSet && res.Mode == warden.ModeShadow {
			return res.Decision != r.Decision
		}
	}
	return false
}

// wantIDs is what a Scan of q over the records recorded (in recording order)
// must visit, in q's order. Text is decided here independently of
// audit.TextMatcher: strings.ToLower of each field.
func wantIDs(recorded []*audit.Record, q audit.Query) []string {
	want := []string{}
	for _, r := range recorded {
		if matches(r, &q) && hasText(r, q.Text) {
			want = append(want, r.ID)
		}
	}
	if !q.Oldest {
		want = reversed(want)
	}
	return want
}

func hasText(r *audit.Record, text string) bool {
	text = strings.ToLower(text)
	for _, f := range []string{r.Reason, r.Event, r.Tool, r.SessionID, r.AgentID, r.PolicyID, string(r.Input)} {
		if strings.Contains(strings.ToLower(f), text) {
			return true
		}
	}
	return false
}

// page reads one page of at most n records after the cursor after.
func page(t *testing.T, s audit.Store, q audit.Query, after string, n int) []string {
	t.Helper()
	q.After = after
	recs, err := audit.Collect(context.Background(), s, q, n)
	if err != nil {
		t.Fatalf("Collect(%+v, %d): %v", q, n, err)
	}
	return ids(recs)
}

// pageAll pages through q in pages of n.
func pageAll(t *testing.T, s audit.Store, q audit.Query, n int) []string {
	t.Helper()
	var all []string
	after := ""
	for {
		p := page(t, s, q, after, n)
		if len(p) > n {
			t.Fatalf("a page of %d has %d records", n, len(p))
		}
		all = append(all, p...)
		if len(p) < n {
			return all
		}
		after = p[len(p)-1]
	}
}

func testPaging(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recorded := filterData(t, s)
	for _, q := range []audit.Query{
		{},
		{Oldest: true},
		{Decision: "deny"},
		{Session: "s2", Oldest: true},
		{Surface: "a2a", Since: base.Add(10 * time.Second)},
		{Tool: "bash"},
		{Text: "report-2", Oldest: true},
	} {
		want := wantIDs(recorded, q)
		for n := 1; n <= len(want)+1; n++ {
			if got := pageAll(t, s, q, n); !slices.Equal(got, want) {
				t.Errorf("paging %+v by %d = %q, want %q", q, n, got, want)
			}
		}
	}
	// The cursor need not match the query: continue after it in scan order.
	q := audit.Query{Decision: "allow", Oldest: true}
	after := recorded[10]
	want := []string{}
	for _, r := range recorded[11:] {
		if r.Decision == "allow" {
			want = append(want, r.ID)
		}
	}
	if after.Decision == "allow" {
		t.Fatalf("test data: %s should not be an allow", after.ID)
	}
	q.After = after.ID
	if got := scanIDs(t, s, q); !slices.Equal(got, want) {
		t.Errorf("Scan(%+v) after a non-matching cursor = %q, want %q", q, got, want)
	}
}

// testPagingConcurrent pages through the store while records are being
// recorded: no page may skip or repeat a record.
func testPagingConcurrent(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recordMany(t, s, "pre", 50, 5)
	for _, oldest := range []bool{false, true} {
		t.Run(fmt.Sprintf("oldest=%v", oldest), func(t *testing.T) {
			var done atomic.Bool
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			prefix := fmt.Sprintf("during-%v", oldest)
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 60; i++ {
						r := rec(fmt.Sprintf("%s-%d-%03d", prefix, w, i), base.Add(-time.Duration(i)*time.Second))
						if err := s.Record(context.Background(), r); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			go func() { wg.Wait(); done.Store(true) }()
			q := audit.Query{Oldest: oldest}
			var got []string
			after := ""
			for n := 1; ; n = n%7 + 1 {
				finished := done.Load()
				p := page(t, s, q, after, n)
				got = append(got, p...)
				if len(p) > 0 {
					after = p[len(p)-1]
				}
				// Newest first, the pages end at the oldest record; oldest
				// first, once recording is over and a page comes back short.
				if len(p) < n && (!oldest || finished) {
					break
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			full := scanIDs(t, s, q)
			if oldest {
				// Oldest first, the pages saw everything, in order.
				if !slices.Equal(got, full) {
					t.Errorf("paged %d records, want all %d in order:\ngot  %q\nwant %q", len(got), len(full), head(got), head(full))
				}
				return
			}
			// Newest first, the pages saw everything recorded before the
			// first page, in order: a tail of the full scan.
			if len(got) == 0 {
				t.Fatal("no records paged")
			}
			k := slices.Index(full, got[0])
			if k < 0 || !slices.Equal(got, full[k:]) {
				t.Errorf("paged %d records, want the %d from %s on, in order", len(got), len(full)-k, got[0])
			}
		})
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func testUnknownCursor(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	for _, empty := range []bool{true, false} {
		if !empty {
			record(t, s, rec("known", base))
		}
		for _, q := range []audit.Query{
			{After: "nope"},
			{After: "nope", Oldest: true},
			{After: "nope", Session: "sess-1"},
			{After: "KNOWN"},
		} {
			calls := 0
			err := s.Scan(context.Background(), q, func(*audit.Record) bool { calls++; return true })
			if !errors.Is(err, audit.ErrUnknownCursor) {
				t.Errorf("Scan(%+v) (empty store: %v) = %v, want ErrUnknownCursor", q, empty, err)
			}
			if calls != 0 {
				t.Errorf("Scan(%+v) with an unknown cursor visited %d records", q, calls)
			}
		}
	}
	// The last record as cursor is known: nothing after it.
	if got := scanIDs(t, s, audit.Query{After: "known"}); len(got) != 0 {
		t.Errorf("Scan after the only record = %q, want none", got)
	}
}

func testEarlyStop(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	all := recordMany(t, s, "stop", 300, 1) // one worker: recording order is id order
	for _, tt := range []struct {
		stop   int
		oldest bool
	}{{1, false}, {1, true}, {2, false}, {150, true}, {299, false}, {300, true}} {
		t.Run(fmt.Sprintf("%d/oldest=%v", tt.stop, tt.oldest), func(t *testing.T) {
			var got []string
			err := s.Scan(context.Background(), audit.Query{Oldest: tt.oldest}, func(r *audit.Record) bool {
				got = append(got, r.ID)
				return len(got) < tt.stop
			})
			if err != nil {
				t.Fatalf("Scan stopped by fn: %v", err)
			}
			want := all
			if !tt.oldest {
				want = reversed(all)
			}
			if !slices.Equal(got, want[:tt.stop]) {
				t.Errorf("visited %q…, want the first %d of %q…", head(got), tt.stop, head(want))
			}
		})
	}
}

func testScanContext(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recordMany(t, s, "ctx", 300, 3)
	for _, tt := range []struct {
		name     string
		cancelAt int // cancel in the fn call of this number; 0: before Scan
		deadline bool
	}{
		{"canceled before", 0, false},
		{"deadline before", 0, true},
		{"canceled at 1", 1, false},
		{"canceled at 3", 3, false},
		{"canceled at 200", 200, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			want := context.Canceled
			if tt.deadline {
				var c2 context.CancelFunc
				ctx, c2 = context.WithDeadline(ctx, time.Now().Add(-time.Second))
				defer c2()
				want = context.DeadlineExceeded
			}
			if tt.cancelAt == 0 && !tt.deadline {
				cancel()
			}
			calls := 0
			var err error
			within(t, 10*time.Second, "Scan with a done context", func() {
				err = s.Scan(ctx, audit.Query{}, func(*audit.Record) bool {
					calls++
					if calls == tt.cancelAt {
						cancel()
					}
					return true
				})
			})
			if !errors.Is(err, want) {
				t.Errorf("Scan = %v, want %v", err, want)
			}
			if calls != tt.cancelAt {
				t.Errorf("fn called %d times, want %d (no call once ctx is done)", calls, tt.cancelAt)
			}
		})
	}
}

func testRecordDuringScan(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recordMany(t, s, "scan", 20, 2)
	n := 0
	within(t, 30*time.Second, "Record inside a Scan", func() {
		err := s.Scan(context.Background(), audit.Query{}, func(r *audit.Record) bool {
			n++
			r.Views = []byte(`{"changed": true}`) // fn owns r
			if err := s.Record(context.Background(), rec("inside-"+r.ID, base)); err != nil {
				t.Errorf("Record inside Scan: %v", err)
			}
			return true
		})
		if err != nil {
			t.Errorf("Scan: %v", err)
		}
	})
	if n != 20 { // newest first: records added during the scan come before it
		t.Errorf("Scan visited %d records, want the 20 there were when it started", n)
	}
	if got := len(scan(t, s, audit.Query{})); got != 40 {
		t.Errorf("after the scan, %d records, want 40", got)
	}
	for _, r := range scan(t, s, audit.Query{Oldest: true})[:20] {
		if len(r.Views) != 0 {
			t.Errorf("record %s was changed by changing what Scan gave fn", r.ID)
		}
	}
}

func testCollect(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	all := recordMany(t, s, "coll", 30, 1)
	for _, tt := range []struct {
		n    int
		q    audit.Query
		want []string
	}{
		{0, audit.Query{}, []string{}},
		{-1, audit.Query{}, []string{}},
		{1, audit.Query{}, reversed(all)[:1]},
		{7, audit.Query{Oldest: true}, all[:7]},
		{30, audit.Query{}, reversed(all)},
		{31, audit.Query{Oldest: true}, all},
		{5, audit.Query{Oldest: true, After: all[27]}, all[28:]},
		{5, audit.Query{Session: "nope"}, []string{}},
	} {
		t.Run(fmt.Sprintf("%d/%+v", tt.n, tt.q), func(t *testing.T) {
			got, err := audit.Collect(context.Background(), s, tt.q, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("Collect returned nil, want a non-nil slice")
			}
			if g := ids(got); !slices.Equal(g, tt.want) {
				t.Errorf("Collect = %q, want %q", g, tt.want)
			}
		})
	}
	if _, err := audit.Collect(context.Background(), s, audit.Query{After: "nope"}, 5); !errors.Is(err, audit.ErrUnknownCursor) {
		t.Errorf("Collect with an unknown cursor = %v, want ErrUnknownCursor", err)
	}
}

func testEmpty(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	for _, q := range []audit.Query{{}, {Oldest: true}, {Session: "x"}, {Event: "e", Decision: "deny", Since: base}} {
		calls := 0
		if err := s.Scan(context.Background(), q, func(*audit.Record) bool { calls++; return true }); err != nil {
			t.Fatalf("Scan(%+v) on an empty store: %v", q, err)
		}
		if calls != 0 {
			t.Errorf("Scan(%+v) on an empty store visited %d records", q, calls)
		}
	}
}

func testByID(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recorded := filterData(t, s)
	for _, tt := range []struct {
		name string
		q    audit.Query
	}{
		{"known", audit.Query{ID: "f07"}},
		{"known, oldest first", audit.Query{ID: "f13", Oldest: true}},
		{"unknown", audit.Query{ID: "nope"}},
		{"its tenant", audit.Query{ID: "f02", Tenant: "acme"}},     // f02 is acme's
		{"another tenant", audit.Query{ID: "f02", Tenant: "beta"}}, // not beta's
		{"with a filter it fails", audit.Query{ID: "f07", Decision: "deny"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := wantIDs(recorded, tt.q)
			if got := scanIDs(t, s, tt.q); !slices.Equal(got, want) {
				t.Errorf("Scan(%+v) = %q, want %q", tt.q, got, want)
			}
		})
	}
	for _, r := range recorded {
		if r.ID == "f02" && r.Tenant != "acme" {
			t.Fatalf("test data: f02 is of tenant %q, want acme", r.Tenant)
		}
	}
}

// testBudget scans with a budget too small to finish: every scan stops
// early with a *ScanStopped, and resuming after it, scan after scan,
// visits exactly what one unbounded scan visits.
func testBudget(t *testing.T, open func(*testing.T) audit.Store) {
	s := open(t)
	recorded := filterData(t, s)
	for _, q := range []audit.Query{
		{},
		{Oldest: true},
		{Text: "report-2"},
		{Text: "BLOCKED", Oldest: true},
		{Decision: "deny"},
		{Tool: "bash", Text: "bash"},
		{Text: "no such text"},
	} {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			want := wantIDs(recorded, q)
			q.Budget = time.Nanosecond
			got := []string{}
			stops := 0
			for {
				err := s.Scan(context.Background(), q, func(r *audit.Record) bool {
					got = append(got, r.ID)
					return true
				})
				if err == nil {
					break
				}
				var stopped *audit.ScanStopped
				if !errors.As(err, &stopped) {
					t.Fatalf("Scan(%+v) = %v, want nil or a *ScanStopped", q, err)
				}
				if stopped.After == "" || stopped.After == q.After || stopped.Scanned < 1 {
					t.Fatalf("Scan(%+v) stopped with %+v: no progress", q, stopped)
				}
				q.After = stopped.After
				if stops++; stops > len(recorded) {
					t.Fatalf("more stops (%d) than records", stops)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("resumed scans visited %q, want %q", got, want)
			}
			t.Logf("%d stops", stops)
		})
	}
	// Without a budget, no stop.
	if err := s.Scan(context.Background(), audit.Query{Text: "no such text"}, func(*audit.Record) bool { return true }); err != nil {
		t.Errorf("Scan without a budget: %v", err)
	}
}
