package hooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkDispatchChain: one dispatch through the policy engine (the
// built-in pack is not loaded here: an empty set, so the engine's cost is
// its index lookup), one webhook hook (loopback httptest server) and one
// command hook (a shell script: fork/exec dominates).
func BenchmarkDispatchChain(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"tool_input":{"path":"/b"}}`))
	}))
	defer srv.Close()
	d, _, _ := dispatcher(b, `
- name: web
  events: [tool.pre_call]
  webhook: {url: "`+srv.URL+`"}
- name: cmd
  events: [tool.pre_call]
  priority: 1
  command: [$S/append.sh, A]
`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := d.Dispatch(ctx, "tool.pre_call", []byte(toolCall))
		if err != nil || res.Decision != "modify" {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkDispatchWebhookOnly: the same without the command hook.
func BenchmarkDispatchWebhookOnly(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"tool_input":{"path":"/b"}}`))
	}))
	defer srv.Close()
	d, _, _ := dispatcher(b, `
- name: web
  events: [tool.pre_call]
  webhook: {url: "`+srv.URL+`"}
`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Dispatch(ctx, "tool.pre_call", []byte(toolCall)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsyncQueue: async hook runs per second through the pool (an
// in-process webhook as the hook, 4 workers), measured from submit to the
// pool draining.
func BenchmarkAsyncQueue(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	d, _, pool, _ := dispatcherPool(b, `
- name: siem
  events: [tool.post_call]
  mode: async
  webhook: {url: "`+srv.URL+`"}
`, 4, b.N+1)
	ctx := context.Background()
	payload := []byte(`{"session_id":"s1","tool_name":"x","tool_result":"ok"}`)
	b.ReportAllocs()
	start := time.Now()
	for range b.N {
		if _, err := d.Dispatch(ctx, "tool.post_call", payload); err != nil {
			b.Fatal(err)
		}
	}
	pool.Close(ctx)
	runs, dropped := pool.Stats()
	if dropped != 0 || runs != uint64(b.N) {
		b.Fatalf("runs %d dropped %d", runs, dropped)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "async-runs/s")
}
