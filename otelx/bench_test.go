package otelx_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

// nopStore records nothing: the benchmarks measure the decision path, not
// a store.
type nopStore struct{ *storetest.Mem }

func (*nopStore) Record(context.Context, *audit.Record) error { return nil }

func step() *warden.Event {
	return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceSDK, Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "ex-1", "toolId": "ls", "inputs": []any{
			map[string]any{"name": "path", "value": "/tmp"}}},
		"context": map[string]any{"session": map[string]any{"id": "bench"}}}}
}

func openGuardian(tb testing.TB, yaml string) *guardian.Guardian {
	tb.Helper()
	cfg, err := config.Parse("b.yaml", []byte(yaml))
	if err != nil {
		tb.Fatal(err)
	}
	g, err := guardian.Open(guardian.Options{Config: cfg, Store: &nopStore{storetest.NewMem()}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		g.Close(ctx)
	})
	return g
}

// unreachable returns a URL nothing listens on.
func unreachable(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// stuck returns a collector that takes requests and never answers (until
// the test ends).
func stuck(tb testing.TB) string {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	tb.Cleanup(func() { close(done); srv.Close() })
	return srv.URL
}

// BenchmarkDecide is one allowed tool call decided and recorded (to a
// store that keeps nothing) without otel: and trace.ocsf_file, and with
// each: spans to a live collector, to an unreachable one, and OCSF events
// to a file.
func BenchmarkDecide(b *testing.B) {
	_, live := httpReceiver(b)
	cases := []struct{ name, yaml string }{
		{"off", ""},
		{"otel-live", fmt.Sprintf("otel: {endpoint: %q}\n", live)},
		{"otel-unreachable", fmt.Sprintf("otel: {endpoint: %q}\n", unreachable(b))},
		{"ocsf-file", fmt.Sprintf("trace: {ocsf_file: %q}\n", filepath.Join(b.TempDir(), "o.jsonl"))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := openGuardian(b, c.yaml)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Decide(ctx, step()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBlockedCollectorNeverSlowsDecisions: with a collector that never
// answers and one nothing listens on, and small queues, no decision waits
// for the collector (the slowest is far below the 30s export timeout a
// blocked queue would wait for), decisions take about as long as without
// otel: (the exporter's goroutines share the CPUs), and what could not be
// exported is counted as dropped. The means compared are the best of
// three rounds each, the rounds alternating between the two guardians, so
// a burst of other work on the machine (CI runs packages in parallel) is
// not read as a slowdown: one round alone once measured 74 µs against 26.
func TestBlockedCollectorNeverSlowsDecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	const n, rounds = 8000, 3
	measure := func(g *guardian.Guardian) (mean, worst time.Duration) {
		ctx := context.Background()
		for range 200 { // warm up
			g.Decide(ctx, step())
		}
		start := time.Now()
		for range n {
			t0 := time.Now()
			if _, err := g.Decide(ctx, step()); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, time.Since(t0))
		}
		return time.Since(start) / n, worst
	}
	baseG := openGuardian(t, "")
	for name, endpoint := range map[string]string{"stuck": stuck(t), "unreachable": unreachable(t)} {
		t.Run(name, func(t *testing.T) {
			g := openGuardian(t, fmt.Sprintf("otel: {endpoint: %q, queue: 16, batch: 8, interval: 1ms, timeout: 30s}\n", endpoint))
			var base, baseWorst, per, worst time.Duration
			for r := range rounds {
				b, bw := measure(baseG)
				p, w := measure(g)
				if r == 0 || b < base {
					base = b
				}
				if r == 0 || p < per {
					per = p
				}
				baseWorst, worst = max(baseWorst, bw), max(worst, w)
			}
			dd, ds := g.OTel().Dropped()
			t.Logf("per decision: %v (slowest %v) without otel:, %v (slowest %v) with a %s collector; dropped %d decisions, %d spans",
				base, baseWorst, per, worst, name, dd, ds)
			if dd+ds == 0 {
				t.Error("nothing dropped with a collector that takes nothing")
			}
			if worst > time.Second {
				t.Errorf("a decision took %v: it waited for the collector", worst)
			}
			if !raceOn && per > 2*base+20*time.Microsecond {
				t.Errorf("decisions slowed from %v to %v", base, per)
			}
		})
	}
}
