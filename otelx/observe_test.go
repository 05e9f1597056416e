package otelx

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden"
)

// discard is a span exporter that keeps nothing.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func benchEvent() (*warden.Event, *warden.Outcome, *audit.Record) {
	ev := &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceACS, RequestID: "r-1",
		Payload: map[string]any{"tool": map[string]any{"name": "database_query", "provider": "pg"}, "capability": "datastore.read",
			"arguments": map[string]any{"q": map[string]any{"value": "select 1",
				"provenance": map[string]any{"provenance_id": "p1", "origin": "user_input", "source_id": "u-1"}}}},
		SessionID: "s-1", TurnID: "t-1", StepID: "r-1"}
	ev.Agent.ID = "agent-1"
	ev.Tool.Name = "database_query"
	out := &warden.Outcome{Verdict: warden.Deny, Reason: "no", PolicyID: "p", Latency: 20 * time.Microsecond, RecordID: "rec-1",
		Results: []warden.Result{{Guardian: "policy", Decision: "deny", Mode: "enforce", Kind: "policy", LatencyUS: 15},
			{Guardian: "hook", Decision: "abstain", Mode: "enforce", Kind: "webhook", LatencyUS: 5}}}
	rec := &audit.Record{ID: "rec-1", Time: time.Now()}
	return ev, out, rec
}

// BenchmarkNewItem is what ObserveRecord does on the decision's
// goroutine: copy the span's attributes (then a non-blocking send).
func BenchmarkNewItem(b *testing.B) {
	ev, out, rec := benchEvent()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = newItem(ctx, ev, out, rec, nil, time.Now())
	}
}

// BenchmarkObserveRecord is ObserveRecord with its worker building and
// exporting (to nowhere) the spans on another goroutine.
func BenchmarkObserveRecord(b *testing.B) {
	e := newExporter(Config{Endpoint: "http://x", Queue: 1 << 16}, discard{})
	defer e.Shutdown(context.Background())
	ev, out, rec := benchEvent()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e.ObserveRecord(ctx, ev, out, rec, nil)
	}
	b.StopTimer()
	d, s := e.Dropped()
	b.ReportMetric(float64(d+s)/float64(b.N), "dropped/op")
}

// TestSpansOfOneDecision checks the span tree of one decision built with
// the SDK's in-memory exporter: names, parenting, timing of the guardian
// children, the decision event.
func TestSpansOfOneDecision(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	e := newExporter(Config{Endpoint: "http://x", Sample: 1}, mem)
	ev, out, rec := benchEvent()
	e.ObserveRecord(context.Background(), ev, out, rec, nil)
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := mem.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	var step tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "gen_ai.tool.call" {
			step = s
		}
	}
	if step.Name == "" || step.Parent.IsValid() {
		t.Fatalf("no root step span: %+v", spans)
	}
	if len(step.Events) != 1 || step.Events[0].Name != "acs.decision" {
		t.Fatalf("events %+v", step.Events)
	}
	at := step.StartTime
	for _, name := range []string{"warden.guardian policy", "warden.guardian hook"} {
		var c *tracetest.SpanStub
		for i := range spans {
			if spans[i].Name == name {
				c = &spans[i]
			}
		}
		if c == nil || c.Parent.SpanID() != step.SpanContext.SpanID() || !c.StartTime.Equal(at) {
			t.Fatalf("%s: %+v", name, c)
		}
		at = c.EndTime
	}
	if at.Sub(step.StartTime) != 20*time.Microsecond {
		t.Errorf("guardians span %v, want the 20µs they took", at.Sub(step.StartTime))
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// After shutdown decisions are dropped and counted, never queued.
	e.ObserveRecord(context.Background(), ev, out, rec, nil)
	if d, _ := e.Dropped(); d != 1 {
		t.Errorf("dropped %d after shutdown", d)
	}
}

// FuzzNewItem: any payload (decoded JSON) under any event name gives a
// span item without a panic, with the mapping's attributes present.
func FuzzNewItem(f *testing.F) {
	f.Add("steps/toolCallRequest", []byte(`{"tool":{"name":"x"},"capability":"c","arguments":{"a":{"value":1,"provenance":{"origin":"user_input","derived_from":["p"]}}}}`))
	f.Add("steps/skillLoad", []byte(`{"skill":{"id":"s","digest":{"algorithm":"sha256","value":"ab"},"load_path":["r",{"id":"q"}]}}`))
	f.Add("agbom/snapshot", []byte(`{"agbom":{"components":[1,2]},"format":7}`))
	f.Add("steps/turnEnd", []byte(`{"turn_id":3,"step_count":"x","provenance":[]}`))
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		var p map[string]any
		if json.Unmarshal(payload, &p) != nil {
			return
		}
		ev := &warden.Event{Name: event, Payload: p}
		it := newItem(context.Background(), ev, &warden.Outcome{}, nil, nil, time.Now())
		if s, ok := steps[event]; ok {
			if it.name != s.name {
				t.Fatalf("span %q for %s", it.name, event)
			}
		}
		for _, kv := range it.attributes() {
			if !kv.Valid() {
				t.Fatalf("invalid attribute %v", kv)
			}
		}
	})
}

// TestGoAPIParent: a decision made with a context holding a span (the Go
// API, a caller's tracing) is a child of that span, in its trace.
func TestGoAPIParent(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	e := newExporter(Config{Endpoint: "http://x", Sample: 0}, mem) // sampled by the parent alone
	defer e.Shutdown(context.Background())
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), parent)
	ev, out, rec := benchEvent()
	e.ObserveRecord(ctx, ev, out, rec, nil)
	e.ObserveRecord(context.Background(), ev, out, rec, nil) // sample 0: a root is not kept
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
	e.ObserveRecord(trace.ContextWithSpanContext(context.Background(), unsampled), ev, out, rec, nil) // nor a child of an unsampled span
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := mem.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the 3 of the decision with a sampled parent", len(spans))
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != tid {
			t.Errorf("%s in trace %s", s.Name, s.SpanContext.TraceID())
		}
		if s.Name == "gen_ai.tool.call" && s.Parent.SpanID() != sid {
			t.Errorf("step span parent %s, want %s", s.Parent.SpanID(), sid)
		}
	}
}
