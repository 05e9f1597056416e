package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
)

// The decisions page over a SQLite trace of 1,000,000 records (issue 9:
// each page and filter under 300 ms). WARDEN_BENCH_1M=1 runs it;
// WARDEN_BENCH_1M_DIR keeps the generated trace between runs (it takes a
// minute or two to write).
const (
	bench1MEnv = "WARDEN_BENCH_1M"
	bench1MDir = "WARDEN_BENCH_1M_DIR"
	bench1MN   = 1_000_000
	// rareSession has one record in every 50,000: a filter on it scans far.
	rareSession = "sess-rare"
)

var bench1MEnd = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// record1M is the i-th record of the generated trace: a mix of surfaces
// and decisions over 5,000 sessions and 20 policies, a ~600 byte input,
// one record a millisecond up to bench1MEnd.
func record1M(i int) *audit.Record {
	at := bench1MEnd.Add(-time.Duration(bench1MN-i) * time.Millisecond)
	r := &audit.Record{ID: fmt.Sprintf("m-%08d", i), Time: at, Surface: "aos", Event: "steps/toolCallRequest",
		SessionID: fmt.Sprintf("sess-%04d", i%5000), AgentID: fmt.Sprintf("agent-%02d", i%40), Decision: "allow",
		Reason: "no policy matched; default decision allow", LatencyUS: int64(30 + i%200), PolicyRevision: "4183bb77a621",
		Results: []warden.Result{{Guardian: "policy", PolicyID: "audit-all", Decision: "allow", Mode: "audit", LatencyUS: 3}}}
	tool := fmt.Sprintf("tool_%02d", i%50)
	if i%50_000 == 12_345 {
		tool = "rotate_kms_key" // rare: 20 records
	}
	r.Tool = tool
	r.Views = json.RawMessage(`{"tool":{"name":"` + tool + `","server":""}}`)
	switch i % 20 {
	case 0, 1, 2, 3, 4, 5, 6:
		r.Surface, r.Event, r.Direction = "mcp", "protocols/MCP", "outbound"
		r.Input = json.RawMessage(`{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"path":"/srv/data/` + strings.Repeat("x", 480) + `"}}}`)
	case 7, 8:
		r.Surface, r.Event = "hooks", "tool.pre_call"
	}
	if r.Input == nil {
		r.Input = json.RawMessage(`{"toolCallRequest":{"executionId":"ex-` + fmt.Sprint(i) + `","toolId":"` + tool + `","inputs":[{"name":"body","value":"` + strings.Repeat("y", 500) + `"}]}}`)
	}
	switch i % 50 {
	case 10, 30, 40, 45:
		p := fmt.Sprintf("policy-%02d", i%20)
		r.Decision, r.PolicyID, r.Reason = "deny", p, "denied by "+p
	case 11, 31:
		r.Decision, r.PolicyID, r.Reason = "modify", "redact-pii", "redacted"
	case 12:
		r.Decision, r.PolicyID, r.Reason = "ask", "email-needs-approval", "needs approval"
	}
	if i%50_000 == 25_000 {
		r.SessionID = rareSession
	}
	if i%10 == 3 { // decided beside a shadow set; one in 1,000 disagrees
		v := r.Decision
		if i%1000 == 3 {
			v = map[bool]string{true: "allow", false: "deny"}[r.Decision != "allow"]
		}
		r.Results = append(r.Results, warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet,
			Decision: v, Mode: warden.ModeShadow})
	}
	return r
}

// store1M opens (and fills, the first time) the 1M-record trace.
func store1M(b *testing.B) *sqlite.Store {
	b.Helper()
	if os.Getenv(bench1MEnv) == "" {
		b.Skip(bench1MEnv + " not set: the 1,000,000-record page benchmark takes minutes")
	}
	dir := os.Getenv(bench1MDir)
	if dir == "" {
		dir = b.TempDir()
	}
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	have := 0
	_ = st.Scan(context.Background(), audit.Query{}, func(r *audit.Record) bool {
		fmt.Sscanf(r.ID, "m-%d", &have)
		have++
		return false
	})
	if have >= bench1MN {
		return st
	}
	start := time.Now()
	const workers = 256
	var wg sync.WaitGroup
	next := make(chan int, workers)
	// Records go in in order, a window of workers wide: the scan order is
	// the recording order, near enough to time order.
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := st.Record(context.Background(), record1M(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for i := have; i < bench1MN; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	b.Logf("wrote %d records in %v", bench1MN-have, time.Since(start))
	return st
}

// BenchmarkDecisionsPage1M is the decisions page, and each filter, over a
// SQLite trace of 1,000,000 records: the store's scan and the page. A
// filter that matches too few records to fill a page within the search
// budget (250 ms) answers with what it found and a link to search on.
func BenchmarkDecisionsPage1M(b *testing.B) {
	st := store1M(b)
	pack, err := policy.LoadSet(policy.Spec{Builtin: true})
	if err != nil {
		b.Fatal(err)
	}
	c := New(Options{Store: st, RunsStream: "/api/runs/stream", Now: func() time.Time { return bench1MEnd },
		Policies: engines{e: policy.NewEngine(pack, policy.Options{}), shadow: policy.NewEngine(pack, policy.Options{})}})
	for _, path := range []string{
		"/decisions",
		"/decisions?decision=deny",
		"/decisions?decision=ask",
		"/decisions?surface=mcp",
		"/decisions?surface=a2a", // none: the whole trace is scanned
		"/decisions?event=tool.pre_call",
		"/decisions?policy=policy-10",
		"/decisions?agent=agent-07",
		"/decisions?session=sess-0042",
		"/decisions?session=" + rareSession,
		"/decisions?tool=tool_07",
		"/decisions?tool=rotate_kms_key",
		"/decisions?q=tool_07",
		"/decisions?q=quartz-lantern", // nowhere: searched until the budget
		"/decisions?since=2026-11-21T11:59:00Z",
		"/decisions?until=2026-11-21T11:50:00Z",
		"/decisions?after=m-00500000",
		"/decisions?disagree=shadow",               // one record in 1,000
		"/decisions?disagree=shadow&decision=deny", // none (each is a live allow): the whole trace is scanned
		"/policies", // the shadow set's count: 1,000 disagreements in the last day, counted to 500
		"/decisions/m-00500000",
		"/sessions/sess-0042",
	} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				c.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatalf("%s: %d %.300s", path, w.Code, w.Body)
				}
			}
		})
	}
}
