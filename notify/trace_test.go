package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestNotifyContextTraceparent: a delivery for a decision made in a trace
// (otel:) carries its traceparent and tracestate; one without carries none.
func TestNotifyContextTraceparent(t *testing.T) {
	var mu sync.Mutex
	var parents, states []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("Traceparent"))
		states = append(states, r.Header.Get("Tracestate"))
		mu.Unlock()
	}))
	defer srv.Close()
	rec := newRecorder()
	n := New([]Target{{URL: srv.URL + "/hook"}}, fast(rec))
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := trace.ParseTraceState("vendor=abc")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts}))
	n.NotifyContext(ctx, fixture(), "")
	rec.final(t, 1)
	n.Notify(fixture(), "")
	rec.final(t, 1)
	closeNow(t, n)
	mu.Lock()
	defer mu.Unlock()
	if len(parents) != 2 || parents[0] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || states[0] != "vendor=abc" {
		t.Errorf("with a trace: traceparent %q tracestate %q", parents, states)
	}
	if len(parents) == 2 && (parents[1] != "" || states[1] != "") {
		t.Errorf("without a trace: traceparent %q tracestate %q", parents[1], states[1])
	}
}
