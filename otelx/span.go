package otelx

import (
	"context"
	"time"

	"github.com/wardenhq/warden/audit"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden"
)

// item is what a decision's spans are built from, copied on the
// decision's goroutine so the worker reads nothing the caller still owns:
// the step's payload attributes (read from the payload now) and the
// strings the other attributes are made of (assembled by the worker).
type item struct {
	parent  trace.SpanContext
	name    string
	start   time.Time
	end     time.Time
	step    []attribute.KeyValue // the mapping's attributes and provenance
	results []warden.Result      // read only: the outcome's and record's
	codes   []string             // read only: the outcome's reason codes
	err     string               // the recording error, if any
	f       facts
}

// facts are the event's and outcome's strings the span attributes name.
type facts struct {
	session, agent, turn, stepID, user, tenant           string
	event, surface, decision, direction, request, record string
	policy, policyVersion, revision, approval, caller    string
	upstream, reason, evaluator                          string
}

// newItem copies what the spans of one decision need. The step span
// starts when the chain started (the record's time less the chain's
// latency) and ends now, after the record committed.
func newItem(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error, now time.Time) *item {
	it := &item{parent: trace.SpanContextFromContext(ctx), name: spanName(ev), end: now, results: out.Results, codes: out.ReasonCodes}
	it.start = now.Add(-out.Latency)
	if rec != nil && rec.Time.Before(now) {
		it.start = rec.Time.Add(-out.Latency)
	}
	if recordErr != nil {
		it.err = recordErr.Error()
	}
	p := ev.Payload
	if s, ok := steps[ev.Name]; ok {
		it.step = s.attrs(ev, p)
	} else if ev.Tool.Name != "" {
		it.step = []attribute.KeyValue{attribute.String("gen_ai.tool.name", ev.Tool.Name)}
	}
	// The provenance the views read; else (no views built, a surface they
	// do not read provenance on) what the payload holds.
	pv := ev.Provenance
	if len(pv) == 0 {
		pv = audit.PayloadProvenance(p)
	}
	if s := audit.SummarizeProvenance(pv); len(s.Origins) > 0 {
		it.step = append(it.step, attribute.StringSlice("acs.provenance.origin", s.Origins))
		if len(s.SourceIDs) > 0 {
			it.step = append(it.step, attribute.StringSlice("acs.provenance.source_id", s.SourceIDs))
		}
		if s.LineageDepth > 0 {
			it.step = append(it.step, attribute.Int64("acs.provenance.lineage_depth", int64(s.LineageDepth)))
		}
	}
	it.f = facts{
		session: ev.SessionID, agent: ev.Agent.ID, turn: ev.TurnID, stepID: ev.StepID, user: ev.User.ID,
		tenant: or(ev.Principal.Tenant, str(ev.Envelope.Context, "tenant_id")),
		event:  ev.Name, surface: ev.Surface, decision: out.Verdict.String(), direction: ev.Direction,
		request: ev.RequestID, record: out.RecordID, policy: out.PolicyID, policyVersion: out.PolicyVersion,
		revision: out.PolicyRevision, approval: out.ApprovalID, caller: ev.Principal.Name,
		upstream: ev.Envelope.Server, reason: out.Reason, evaluator: audit.Evaluator(out.Results),
	}
	return it
}

// attributes are the step span's attributes.
func (it *item) attributes() []attribute.KeyValue {
	f := &it.f
	kv := make([]attribute.KeyValue, 0, len(it.step)+19)
	kv = append(kv, it.step...)
	for _, a := range [...]struct{ k, v string }{
		{"acs.session.id", f.session}, {"acs.agent.id", f.agent}, {"acs.turn.id", f.turn}, {"acs.step.id", f.stepID},
		{"acs.user.id", f.user}, {"acs.tenant_id", f.tenant},
		{"warden.event", f.event}, {"warden.surface", f.surface}, {"warden.decision", f.decision},
		{"warden.direction", f.direction}, {"warden.request_id", f.request}, {"warden.record_id", f.record},
		{"warden.policy_id", f.policy}, {"warden.approval_id", f.approval}, {"warden.caller", f.caller},
		{"warden.upstream", f.upstream},
	} {
		if a.v == "" || has(it.step, a.k) {
			continue // the mapping's attribute, when the step has it, stands
		}
		kv = append(kv, attribute.String(a.k, a.v))
	}
	return kv
}

// has reports whether kv holds key k.
func has(kv []attribute.KeyValue, k string) bool {
	for _, x := range kv {
		if string(x.Key) == k {
			return true
		}
	}
	return false
}

// decisionAttrs are the acs.decision event's attributes.
func (it *item) decisionAttrs() []attribute.KeyValue {
	f := &it.f
	d := make([]attribute.KeyValue, 0, 7)
	d = append(d, attribute.String("acs.decision", f.decision), attribute.String("acs.evaluator", f.evaluator))
	d = appendIf(d, "acs.reasoning", f.reason)
	d = appendIf(d, "acs.evaluator_version", f.revision)
	d = appendIf(d, "acs.policy_id", f.policy)
	d = appendIf(d, "acs.policy_version", f.policyVersion)
	if len(it.codes) > 0 {
		d = append(d, attribute.StringSlice("acs.reason_codes", it.codes))
	}
	return d
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
	ctx, span := tr.Start(ctx, it.name, trace.WithTimestamp(it.start), trace.WithAttributes(it.attributes()...))
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
	span.AddEvent("acs.decision", trace.WithTimestamp(it.end), trace.WithAttributes(it.decisionAttrs()...))
	if it.err != "" {
		span.SetStatus(codes.Error, "decision not recorded: "+it.err)
	}
	span.End(trace.WithTimestamp(it.end))
}
