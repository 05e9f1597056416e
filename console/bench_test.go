package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

// benchConsole is a console over an in-memory trace of n records shaped
// like real ones (MCP and AOS, results, views, a 1 KiB input), so the
// benchmarks time what a page adds to the store's scan: decoding the rows'
// method and tool, and rendering.
func benchConsole(b *testing.B, n int) *Console {
	b.Helper()
	st := storetest.NewMem()
	input := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/srv/%0900d"}}}`, 0)
	for i := range n {
		r := &audit.Record{ID: fmt.Sprintf("r-%08d", i), Time: t0.Add(time.Duration(i) * time.Millisecond), Event: "protocols/MCP",
			Surface: "mcp", Direction: "outbound", SessionID: fmt.Sprint("s-", i%500), Decision: "allow", Reason: "no policy matched; default decision allow",
			LatencyUS: 57, Input: json.RawMessage(input), Views: json.RawMessage(`{"tool":{"name":"read_file","server":"fs","args":{}}}`),
			Results: []warden.Result{{Guardian: "policy", PolicyID: "audit-reads", Decision: "deny", Mode: "audit", LatencyUS: 4}}}
		if i%10 == 0 {
			r.Decision, r.PolicyID, r.Surface, r.Event = "deny", "deny-secrets", "aos", "steps/toolCallRequest"
		}
		if err := st.Record(context.Background(), r); err != nil {
			b.Fatal(err)
		}
	}
	return New(Options{Store: st, RunsStream: "/api/runs/stream"})
}

func benchPage(b *testing.B, c *Console, path string) {
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		c.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 {
			b.Fatalf("%s: %d", path, w.Code)
		}
	}
}

// BenchmarkDecisionsPage is the decisions page's cost over an in-memory
// store (the store's own scan is in the sqlite benchmarks).
func BenchmarkDecisionsPage(b *testing.B) {
	c := benchConsole(b, 10_000)
	for _, path := range []string{"/decisions", "/decisions?decision=deny", "/decisions?surface=mcp&session=s-7", "/decisions?after=r-00005000"} {
		b.Run(path, func(b *testing.B) { benchPage(b, c, path) })
	}
}

// BenchmarkDecisionPage is one decision's page.
func BenchmarkDecisionPage(b *testing.B) {
	benchPage(b, benchConsole(b, 10_000), "/decisions/r-00005000")
}
