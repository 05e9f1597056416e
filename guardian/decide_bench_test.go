package guardian_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/sqlite"
)

// benchRequest is the AOS request bench/compare.sh sends: its params are
// the tool-call step the benchmarks below decide in-process.
const benchRequest = "../bench/requests/tool_call.json"

// parallelDeciders is how many goroutines BenchmarkDecideParallel decides
// from, whatever GOMAXPROCS is: bench/compare.sh's 32 connections. With
// only GOMAXPROCS goroutines a durable store would commit one or two
// records a batch, which no server under load does.
const parallelDeciders = 32

// toolCallPayload returns a fresh copy of the bench request's params, as
// an AOS handler decodes them.
func toolCallPayload(tb testing.TB) map[string]any {
	tb.Helper()
	b, err := os.ReadFile(benchRequest)
	if err != nil {
		tb.Fatal(err)
	}
	var req struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		tb.Fatalf("%s: %v", benchRequest, err)
	}
	if req.Method != "steps/toolCallRequest" || req.Params == nil {
		tb.Fatalf("%s: method %q with params %v, want steps/toolCallRequest with params", benchRequest, req.Method, req.Params != nil)
	}
	return req.Params
}

// openBenchGuardian opens a Guardian with the built-in pack and, for store
// "sqlite", the SQLite trace in a fresh directory opened as `warden serve`
// opens it (sqlite.Open with the default, durable Synchronous "normal",
// the directory's redaction key), returned too; for "none", no trace.
func openBenchGuardian(tb testing.TB, store string) (*guardian.Guardian, *sqlite.Store) {
	tb.Helper()
	var opts guardian.Options
	var trace *sqlite.Store
	switch store {
	case "none":
	case "sqlite":
		dir := tb.TempDir()
		st, err := sqlite.Open(dir, sqlite.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if err := st.Close(); err != nil {
				tb.Errorf("closing the trace: %v", err)
			}
		})
		opts.Store, opts.KeyDir, trace = st, dir, st
	default:
		tb.Fatalf("store %q: want none or sqlite", store)
	}
	g, err := guardian.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close(context.Background()) })
	return g, trace
}

// TestDecideBenchEvent checks what the benchmarks rely on: the bench
// request's step is allowed by the built-in pack with and without a
// trace, it is recorded with the SQLite trace, and Decide
// leaves the payload as it was, so one decoded payload can be decided
// again and again.
func TestDecideBenchEvent(t *testing.T) {
	for _, store := range []string{"none", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			g, _ := openBenchGuardian(t, store)
			payload := toolCallPayload(t)
			for i := range 3 {
				out, err := g.Decide(context.Background(), &warden.Event{Name: "steps/toolCallRequest", Payload: payload})
				if err != nil {
					t.Fatalf("decision %d: %v", i, err)
				}
				if out.Verdict != warden.Allow {
					t.Fatalf("decision %d: %s (%s), want allow", i, out.Verdict, out.Reason)
				}
				if store == "sqlite" && out.RecordID == "" {
					t.Fatalf("decision %d: no record id with the SQLite trace", i)
				}
				if store == "none" && out.RecordID != "" {
					t.Fatalf("decision %d: record id %q without a trace", i, out.RecordID)
				}
			}
			if !reflect.DeepEqual(payload, toolCallPayload(t)) {
				t.Fatal("Decide changed the payload")
			}
		})
	}
}

// BenchmarkDecide is issue 15's in-process target: one tool-call step (the
// params of bench/requests/tool_call.json) decided by the built-in pack,
// no trace.
func BenchmarkDecide(b *testing.B) {
	g, _ := openBenchGuardian(b, "none")
	payload := toolCallPayload(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Decide(ctx, &warden.Event{Name: "steps/toolCallRequest", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideParallel decides the same step from parallelDeciders
// goroutines without a trace and with the SQLite trace (each decision
// waits for its batch's commit, as in `warden serve`); decisions/s is the
// figure to compare (issue 15: sqlite ≥ 0.8× none). With the trace it also
// reports records/batch, the decisions one commit answered on average
// (each run of b.N decisions opens a fresh trace).
func BenchmarkDecideParallel(b *testing.B) {
	for _, store := range []string{"none", "sqlite"} {
		b.Run("store="+store, func(b *testing.B) {
			g, trace := openBenchGuardian(b, store)
			ctx := context.Background()
			p := (parallelDeciders + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
			// One payload per goroutine: nothing shared but the Guardian.
			payloads := make(chan map[string]any, p*runtime.GOMAXPROCS(0))
			for range cap(payloads) {
				payloads <- toolCallPayload(b)
			}
			b.ReportAllocs()
			b.SetParallelism(p)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				payload := <-payloads
				for pb.Next() {
					if _, err := g.Decide(ctx, &warden.Event{Name: "steps/toolCallRequest", Payload: payload}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
			if trace != nil {
				// How many decisions shared a commit: the trace's writer
				// commits each batch once for all its waiting deciders.
				if st := trace.Stats(); st.Batches > 0 {
					b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/batch")
				}
			}
		})
	}
}
