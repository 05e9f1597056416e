package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/tracesql"

	"github.com/wardenhq/warden/storetest"
)

func TestACS(t *testing.T) {
	storetest.RunACS(t, func(t *testing.T) acsstate.Store {
		return open(t, t.TempDir(), Options{})
	})
}

// acsIndexes are the indexes of schema 8's ACS tables.
var acsIndexes = []string{
	"acs_requests_at:CREATE INDEX acs_requests_at ON acs_requests (session, at)",
}

func testACSSession(id string) *acsstate.Session {
	return &acsstate.Session{ID: id, AgentID: "agent", Tenant: "acme", Version: "1.0",
		Methods: []string{"steps/toolCallRequest"}, Hello: base, LastSeen: base}
}

func testACSEntry(n int, prev string) *acsstate.Entry {
	return &acsstate.Entry{EntryID: fmt.Sprint("e", n), StepID: fmt.Sprint("req-", n),
		StepType: "steps/toolCallRequest", Timestamp: base.Add(time.Duration(n) * time.Second),
		PreviousHash: prev, EntryHash: fmt.Sprintf("%064x", n), Decision: "allow"}
}

// goAll runs fn(i) for i in [0, n) on n goroutines and waits for them.
func goAll(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i) }()
	}
	wg.Wait()
}

// TestACSTwoStores: two stores on one directory (two processes, or two
// replicas sharing it) agree: of 16 RememberRequests of one key, half
// through each, one succeeds; of appends racing on one head, one wins; and
// the chain they build together is linked.
func TestACSTwoStores(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{open(t, dir, Options{}), open(t, dir, Options{})}
	ctx := context.Background()
	if err := stores[0].PutACSSession(ctx, testACSSession("s1")); err != nil {
		t.Fatal(err)
	}
	if got, err := stores[1].ACSSession(ctx, "s1"); err != nil || got.AgentID != "agent" {
		t.Fatalf("the other store reads %+v, %v", got, err)
	}
	for round := range 3 {
		var mu sync.Mutex
		ok := 0
		goAll(16, func(i int) {
			err := stores[i%2].RememberRequest(ctx, "s1", fmt.Sprint("req-", round), base, time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, acsstate.ErrReplay):
				t.Errorf("store %d: %v", i%2, err)
			}
		})
		if ok != 1 {
			t.Errorf("round %d: %d RememberRequests succeeded, want 1", round, ok)
		}
	}
	// Each goroutine appends 10 entries, through either store in turn,
	// rereading the head through the other when it moved.
	var moved sync.Map
	goAll(16, func(i int) {
		for n, tries := 0, 0; n < 10; tries++ {
			cur, err := stores[(i+tries)%2].ACSSession(ctx, "s1")
			if err != nil {
				t.Error(err)
				return
			}
			err = stores[(i+tries+1)%2].AppendACSEntry(ctx, "s1", cur.Head, testACSEntry(1000*i+n, cur.Head))
			switch {
			case err == nil:
				n++
			case errors.Is(err, acsstate.ErrChainMoved):
				moved.Store(i, true)
			default:
				t.Errorf("appender %d: %v", i, err)
				return
			}
		}
	})
	for _, s := range stores {
		x, err := s.ACSSession(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		chain, err := s.ACSEntries(ctx, "s1", 0, 0)
		if err != nil || len(chain) != 160 || x.Entries != 160 {
			t.Fatalf("%d entries stored, Entries %d, %v; want 160", len(chain), x.Entries, err)
		}
		prev := ""
		for i, e := range chain {
			if e.PreviousHash != prev {
				t.Fatalf("entry %d follows %q, want %q", i, e.PreviousHash, prev)
			}
			prev = e.EntryHash
		}
		if x.Head != prev {
			t.Errorf("Head %q, want the last entry's %q", x.Head, prev)
		}
	}
	n := 0
	moved.Range(func(any, any) bool { n++; return true })
	t.Logf("%d of 16 appenders found the head moved at least once", n)
}

// TestACSForgetsKeys: RememberRequest deletes its session's keys older than
// the window, and only its session's.
func TestACSForgetsKeys(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	count := func(session string) (n int) {
		t.Helper()
		if err := s.rdb.QueryRow(`SELECT count(*) FROM acs_requests WHERE session = ?`, session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := s.RememberRequest(ctx, "quiet", "k", base, time.Second); err != nil {
		t.Fatal(err)
	}
	const window, step = time.Second, 10 * time.Millisecond
	for i := range 300 {
		if err := s.RememberRequest(ctx, "busy", fmt.Sprint("k", i), base.Add(time.Duration(i)*step), window); err != nil {
			t.Fatal(err)
		}
	}
	if n := count("busy"); n != int(window/step)+1 {
		t.Errorf("busy session holds %d keys, want the %d of its window", n, int(window/step)+1)
	}
	if n := count("quiet"); n != 1 {
		t.Errorf("quiet session holds %d keys, want its 1", n)
	}
}

// TestACSPlans: every ACS statement that looks up rows seeks a primary key,
// or acs_requests_at for the expired keys; none scans a table or sorts.
func TestACSPlans(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	want := map[string]string{
		acsForget:           "USING COVERING INDEX acs_requests_at (session=? AND at<?)",
		tracesql.ACSAdvance: "USING PRIMARY KEY (id=?)",
		acsInsert:           "USING PRIMARY KEY (id=?)",
		tracesql.ACSEnd:     "USING PRIMARY KEY (id=?)",
		tracesql.ACSGet:     "USING PRIMARY KEY (id=?)",
		tracesql.ACSList:    "USING PRIMARY KEY (session=? AND seq>?)",
	}
	for q, w := range want {
		q = tracesql.Numbered(q)
		args := make([]any, strings.Count(q, "?"))
		for j := range args {
			args[j] = "x"
		}
		plan := queryPlan(t, s, q, args)
		if !strings.Contains(plan, "SEARCH") || !strings.Contains(plan, w) || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("statement %.40q: plan %q, want a SEARCH %s", q, plan, w)
		}
	}
}

// TestACSDurable: ACS state survives Close and reopen; a read-only store
// reads it and changes nothing; a closed one refuses changes.
func TestACSDurable(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, Options{Synchronous: "full"})
	if err := s.PutACSSession(ctx, testACSSession("s1")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendACSEntry(ctx, "s1", "", testACSEntry(1, "")); err != nil {
		t.Fatal(err)
	}
	if err := s.RememberRequest(ctx, "s1", "req-1", base, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range changeACS(s) {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	s = open(t, dir, Options{})
	if err := s.RememberRequest(ctx, "s1", "req-1", base.Add(time.Minute), time.Hour); !errors.Is(err, acsstate.ErrReplay) {
		t.Errorf("a key remembered before the restart: %v, want ErrReplay", err)
	}
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, st := range []*Store{s, r} {
		if x, err := st.ACSSession(ctx, "s1"); err != nil || x.Entries != 1 || x.Head != fmt.Sprintf("%064x", 1) {
			t.Errorf("after reopening: %+v, %v", x, err)
		}
		if es, err := st.ACSEntries(ctx, "s1", 0, 0); err != nil || len(es) != 1 || es[0].EntryID != "e1" {
			t.Errorf("entries after reopening: %+v, %v", es, err)
		}
	}
	for name, err := range changeACS(r) {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only store: %v, want ErrReadOnly", name, err)
		}
	}
}

// changeACS calls every changing ACS method of s and returns their errors.
func changeACS(s *Store) map[string]error {
	ctx := context.Background()
	h := fmt.Sprintf("%064x", 1)
	return map[string]error{
		"PutACSSession":   s.PutACSSession(ctx, testACSSession("s2")),
		"RememberRequest": s.RememberRequest(ctx, "s1", "req-2", base, time.Hour),
		"AppendACSEntry":  s.AppendACSEntry(ctx, "s1", h, testACSEntry(2, h)),
		"EndACSSession":   s.EndACSSession(ctx, "s1", base),
	}
}

// BenchmarkACSStep measures what one ACS step costs the store: its
// RememberRequest and its AppendACSEntry, each a pass of the trace writer, on one
// session with a 10-minute replay window and a step a second, so that after
// the first 600 steps the window holds 600 keys and each call prunes one.
// serial/* is one caller (latency); parallel is 64 callers on sessions of
// their own (throughput, reported as steps/s; the commits serialize).
func BenchmarkACSStep(b *testing.B) {
	steps := func(b *testing.B, s *Store, session string, n int) {
		ctx := context.Background()
		if err := s.PutACSSession(ctx, testACSSession(session)); err != nil {
			b.Error(err) // not Fatal: it may run on a goroutine of its own
			return
		}
		head := ""
		for i := range n {
			at := base.Add(time.Duration(i) * time.Second)
			if err := s.RememberRequest(ctx, session, fmt.Sprint("13fa8d6f-8a4b-4c1e-9f2a-", i), at, 10*time.Minute); err != nil {
				b.Error(err)
				return
			}
			e := testACSEntry(i+1, head)
			if err := s.AppendACSEntry(ctx, session, head, e); err != nil {
				b.Error(err)
				return
			}
			head = e.EntryHash
		}
	}
	for _, sync := range []string{"normal", "full"} {
		b.Run("serial/"+sync, func(b *testing.B) {
			s := open(b, b.TempDir(), Options{Synchronous: sync})
			b.ResetTimer()
			steps(b, s, "s1", b.N)
		})
	}
	b.Run("parallel/normal", func(b *testing.B) {
		s := open(b, b.TempDir(), Options{})
		const callers = 64
		b.ResetTimer()
		start := time.Now()
		goAll(callers, func(i int) {
			steps(b, s, fmt.Sprint("s", i), (b.N+callers-1)/callers)
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "steps/s")
	})
}

// TestACSCallsJoinRecordBatches: RememberRequest and AppendACSEntry calls
// made while records are written share the writer's batches (acsbatch.go),
// with and without a trace log: every record is stored, every fresh key is
// remembered once, and a refused call (a replayed key, a moved head) is
// that call's answer alone, failing no record and no other call.
func TestACSCallsJoinRecordBatches(t *testing.T) {
	for _, opts := range []Options{{}, {Log: true}, {MaxBatch: 1, QueueSize: 1}} {
		t.Run(fmt.Sprintf("log=%v,batch=%d", opts.Log, opts.MaxBatch), func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, opts)
			ctx := context.Background()
			if err := s.PutACSSession(ctx, testACSSession("s1")); err != nil {
				t.Fatal(err)
			}
			const n = 200
			var replays, moved, appended, failed int
			var mu sync.Mutex
			count := func(err error, want error, hits *int) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
				case want != nil && errors.Is(err, want):
					*hits++
				default:
					failed++
					t.Error(err)
				}
			}
			goAll(n, func(i int) {
				var wg sync.WaitGroup
				wg.Add(4)
				go func() {
					defer wg.Done()
					count(s.Record(ctx, testRecord(fmt.Sprint("r", i), base.Add(time.Duration(i)*time.Millisecond))), nil, nil)
				}()
				key := fmt.Sprint("k", i/2) // two calls for each key
				go func() {
					defer wg.Done()
					count(s.RememberRequest(ctx, "s1", key, base, time.Hour), acsstate.ErrReplay, &replays)
				}()
				go func() {
					defer wg.Done()
					// A stale head: refused unless the chain is empty.
					err := s.AppendACSEntry(ctx, "s1", "", testACSEntry(i, ""))
					if err == nil {
						mu.Lock()
						appended++
						mu.Unlock()
					}
					count(err, acsstate.ErrChainMoved, &moved)
				}()
				go func() {
					defer wg.Done()
					count(s.RememberRequest(ctx, "nosuch", fmt.Sprint("u", i), base, time.Hour), nil, nil) // a key needs no session
				}()
				wg.Wait()
			})
			if failed > 0 {
				t.Fatalf("%d calls failed", failed)
			}
			if replays != n/2 {
				t.Errorf("%d replays of %d keys sent twice, want %d", replays, n/2, n/2)
			}
			if appended != 1 || moved != n-1 {
				t.Errorf("%d appends on the empty head succeeded and %d found it moved, want 1 and %d", appended, moved, n-1)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			r := open(t, dir, opts)
			st := r.Stats()
			recs := 0
			err := r.Scan(ctx, audit.Query{}, func(*audit.Record) bool { recs++; return true })
			if err != nil || recs != n {
				t.Errorf("%d records after reopening, %v; want %d", recs, err, n)
			}
			if st.Failed != 0 {
				t.Errorf("Stats %+v, want no failed records", st)
			}
			var keys int
			if err := r.rdb.QueryRow(`SELECT count(*) FROM acs_requests`).Scan(&keys); err != nil || keys != n/2+n {
				t.Errorf("%d request keys stored, %v; want %d", keys, err, n/2+n)
			}
			sess, err := r.ACSSession(ctx, "s1")
			if err != nil || sess.Entries != 1 {
				t.Errorf("session %+v, %v; want 1 entry", sess, err)
			}
		})
	}
}

// BenchmarkACSSessionRead is the read an ACS step makes of its session while
// other sessions' steps commit (a writer goroutine remembering keys without
// pause), through the point reads' connections (pdb, unmapped) and, for
// comparison, through the scans' (rdb, which map the file: each read after
// a commit unmaps it and faults its pages back in).
func BenchmarkACSSessionRead(b *testing.B) {
	for _, via := range []string{"pdb", "rdb"} {
		b.Run(via, func(b *testing.B) {
			s := open(b, b.TempDir(), Options{})
			if via == "rdb" {
				s.pdb = nil // pointReader falls back to rdb (before the statement is prepared)
			}
			ctx := context.Background()
			if err := s.PutACSSession(ctx, testACSSession("s1")); err != nil {
				b.Fatal(err)
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := s.RememberRequest(ctx, "writer", fmt.Sprint("k", i), base, time.Minute); err != nil {
						b.Error(err)
						return
					}
				}
			}()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.ACSSession(ctx, "s1"); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			close(stop)
			<-done
		})
	}
}
