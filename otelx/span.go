package otelx

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden"
)

// item is what a decision's spans are built from, copied at Observe time
// so the worker reads nothing the caller still owns.
type item struct {
	parent   trace.SpanContext
	name     string
	start    time.Time
	end      time.Time
	attrs    []attribute.KeyValue
	decision []attribute.KeyValue
	results  []warden.Result // read only: the outcome's and record's
	err      string          // the recording error, if any
}

// newItem copies what the spans of one decision need. The step span
// starts when the chain started (the record's time less the chain's
// latency) and ends now, after the record committed.
func newItem(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *warden.Record, recordErr error, now time.Time) *item {
	it := &item{parent: trace.SpanContextFromContext(ctx), name: spanName(ev), end: now, results: out.Results}
	it.start = now.Add(-out.Latency)
	if rec != nil && rec.Time.Before(now) {
		it.start = rec.Time.Add(-out.Latency)
	}
	if recordErr != nil {
		it.err = recordErr.Error()
	}
	p := ev.Payload
	kv := make([]attribute.KeyValue, 0, 24)
	if s, ok := steps[ev.Name]; ok {
		kv = append(kv, s.attrs(ev, p)...)
	} else if ev.Tool.Name != "" {
		kv = append(kv, attribute.String("gen_ai.tool.name", ev.Tool.Name))
	}
	kv = appendIf(kv, "acs.session.id", ev.SessionID)
	kv = appendIf(kv, "acs.agent.id", ev.Agent.ID)
	kv = appendIf(kv, "acs.turn.id", ev.TurnID)
	kv = appendIf(kv, "acs.step.id", ev.StepID)
	kv = appendIf(kv, "acs.user.id", ev.User.ID)
	kv = appendIf(kv, "acs.tenant_id", or(ev.Principal.Tenant, str(ev.Envelope.Context, "tenant_id")))
	if origins, sources, depth := provenance(p); len(origins) > 0 {
		kv = append(kv, attribute.StringSlice("acs.provenance.origin", origins))
		if len(sources) > 0 {
			kv = append(kv, attribute.StringSlice("acs.provenance.source_id", sources))
		}
		if depth > 0 {
			kv = append(kv, attribute.Int64("acs.provenance.lineage_depth", depth))
		}
	}
	kv = append(kv,
		attribute.String("warden.event", ev.Name),
		attribute.String("warden.surface", ev.Surface),
		attribute.String("warden.decision", out.Verdict.String()))
	kv = appendIf(kv, "warden.direction", ev.Direction)
	kv = appendIf(kv, "warden.request_id", ev.RequestID)
	kv = appendIf(kv, "warden.record_id", out.RecordID)
	kv = appendIf(kv, "warden.policy_id", out.PolicyID)
	kv = appendIf(kv, "warden.approval_id", out.ApprovalID)
	kv = appendIf(kv, "warden.caller", ev.Principal.Name)
	if ev.Envelope.Server != "" {
		kv = append(kv, attribute.String("warden.upstream", ev.Envelope.Server))
	}
	it.attrs = kv

	d := []attribute.KeyValue{
		attribute.String("acs.decision", out.Verdict.String()),
		attribute.String("acs.evaluator", evaluator(out.Results)),
	}
	d = appendIf(d, "acs.reasoning", out.Reason)
	d = appendIf(d, "acs.evaluator_version", out.PolicyRevision)
	d = appendIf(d, "acs.policy_id", out.PolicyID)
	d = appendIf(d, "acs.policy_version", out.PolicyVersion)
	if len(out.ReasonCodes) > 0 {
		d = append(d, attribute.StringSlice("acs.reason_codes", out.ReasonCodes))
	}
	it.decision = d
	return it
}

func appendIf(kv []attribute.KeyValue, k, v string) []attribute.KeyValue {
	if v == "" {
		return kv
	}
	return append(kv, attribute.String(k, v))
}

// emit builds and ends the spans of it: the step span, its acs.decision
// event, and one child span per guardian result, laid end to end in run
// order from the step span's start (the chain runs them one after another).
func (it *item) emit(tr trace.Tracer) {
	ctx := context.Background()
	if it.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, it.parent)
	}
	ctx, span := tr.Start(ctx, it.name, trace.WithTimestamp(it.start), trace.WithAttributes(it.attrs...))
	if !span.IsRecording() {
		span.End()
		return
	}
	at := it.start
	for i := range it.results {
		r := &it.results[i]
		d := time.Duration(r.LatencyUS) * time.Microsecond
		kv := []attribute.KeyValue{
			attribute.String("warden.guardian", r.Guardian),
			attribute.String("warden.decision", r.Decision),
			attribute.String("warden.mode", r.Mode),
		}
		kv = appendIf(kv, "warden.kind", r.Kind)
		kv = appendIf(kv, "warden.policy_id", r.PolicyID)
		kv = appendIf(kv, "warden.policy_version", r.PolicyVersion)
		kv = appendIf(kv, "warden.reason", r.Reason)
		kv = appendIf(kv, "warden.refused", r.Refused)
		_, child := tr.Start(ctx, "warden.guardian "+r.Guardian, trace.WithTimestamp(at), trace.WithAttributes(kv...))
		if r.Error != "" {
			child.SetStatus(codes.Error, r.Error)
		}
		end := at.Add(d)
		child.End(trace.WithTimestamp(end))
		if r.Mode != "shadow" { // a shadow set runs after, beside nothing
			at = end
		}
	}
	span.AddEvent("acs.decision", trace.WithTimestamp(it.end), trace.WithAttributes(it.decision...))
	if it.err != "" {
		span.SetStatus(codes.Error, "decision not recorded: "+it.err)
	}
	span.End(trace.WithTimestamp(it.end))
}
