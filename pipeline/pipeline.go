package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Observer is told of every decision (metrics); it must not block.
type Observer interface {
	Observe(ev *warden.Event, out *warden.Outcome, recordErr error)
}

// RecordObserver is an Observer that is also given the decision's context
// (the caller's, carrying its trace context) and the record as stored —
// after the record filter, so redacted — or nil when there is no trace or
// recording failed. The Pipeline calls ObserveRecord instead of Observe on
// observers that implement it (the trace exporters: package otelx, ocsf).
// It must not block, and must not change rec.
type RecordObserver interface {
	Observer
	ObserveRecord(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error)
}

// Observers tells every Observer it holds, in order.
type Observers []Observer

// Observe calls Observe on each of os.
func (os Observers) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	for _, o := range os {
		o.Observe(ev, out, recordErr)
	}
}

// ObserveRecord calls ObserveRecord on each of os that is a
// RecordObserver, Observe on the others.
func (os Observers) ObserveRecord(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error) {
	for _, o := range os {
		if ro, ok := o.(RecordObserver); ok {
			ro.ObserveRecord(ctx, ev, out, rec, recordErr)
		} else {
			o.Observe(ev, out, recordErr)
		}
	}
}

// Async runs the async hooks of an event that was decided and not refused
// (a step that is being taken); it must not block.
type Async interface {
	RunAsync(ev *warden.Event)
}

// Pipeline is the one decision core: it builds an event's views with its
// ViewBuilder, runs the event's Chain, records the outcome in a Store before
// it is answered, and starts the event's async hooks. A decision that cannot
// be recorded becomes a deny with reason code trace_unavailable (fail closed,
// never silently unrecorded).
type Pipeline struct {
	chain    atomic.Pointer[warden.Chain]
	router   atomic.Pointer[Router]
	views    warden.ViewBuilder
	store    audit.Store
	observer Observer
	async    Async
	filter   audit.RecordFilter
	appr     approval.Approvals
	shadow   Shadow
	labels   *labels.Cache
}

// Router picks the chain for an event (hooks declared per event); nil means
// the Pipeline's single chain.
type Router func(event string) *warden.Chain

// New returns a Pipeline building views with views (catalog.Views in
// production; nil builds none). store may be nil (no trace: `warden eval`);
// observer may be nil.
func New(c *warden.Chain, views warden.ViewBuilder, store audit.Store, observer Observer) *Pipeline {
	d := &Pipeline{views: views, store: store, observer: observer}
	d.chain.Store(c)
	return d
}

// SetAsync sets what runs the async hooks of decided events (nil: none run).
// Call it before the Pipeline is used.
func (d *Pipeline) SetAsync(a Async) { d.async = a }

// SetRecordFilter sets the filter every record passes through before it is
// stored (nil: none). Call it before the Pipeline is used.
func (d *Pipeline) SetRecordFilter(f audit.RecordFilter) { d.filter = f }

// SetApprovals sets what keeps the approvals of asked steps (nil: an asked
// step gets no approval, and every surface refuses it). Approvals need the
// trace: without a Store they are not used. Call it before the Pipeline is
// used.
func (d *Pipeline) SetApprovals(a approval.Approvals) { d.appr = a }

// SetLabels sets what keeps the sessions' labels (nil: none are read or
// kept, and session.labels is always empty). Call it before the Pipeline is
// used. See Decide for when a step's labels are kept.
func (d *Pipeline) SetLabels(c *labels.Cache) { d.labels = c }

// SetChain swaps the chain atomically; in-flight decisions finish on the old one.
func (d *Pipeline) SetChain(c *warden.Chain) { d.chain.Store(c) }

// Chain returns the current default chain.
func (d *Pipeline) Chain() *warden.Chain { return d.chain.Load() }

// SetRouter routes each event to its own chain (nil: the default chain for
// all). It may be swapped at any time, like SetChain.
func (d *Pipeline) SetRouter(r Router) {
	if r == nil {
		d.router.Store(nil)
		return
	}
	d.router.Store(&r)
}

// ChainFor returns the chain that decides events named event.
func (d *Pipeline) ChainFor(event string) *warden.Chain {
	if r := d.router.Load(); r != nil {
		if c := (*r)(event); c != nil {
			return c
		}
	}
	return d.chain.Load()
}

// Decide runs the chain for ev and records the outcome. The returned error wraps
// ErrTraceUnavailable when recording failed; the Outcome is then a deny.
//
// Decide builds ev's views (whatever the surface put in them is replaced),
// so every surface shows policies the same variables for the same step.
//
// With a LabelCache (SetLabels), Decide reads the session's labels into
// ev.SessionLabels before the chain runs, and once the outcome is known
// (after an approved retry), keeps the labels the step sets
// (Outcome.Labels: its policies' label: actions, and its data's
// provenance, see ProvenanceLabels) — only when the step is taken (Allow
// or Modify), because only then did its content flow; a refused or held
// step sets none. New labels are written to the store before the step is
// recorded and answered, and the record lists them (a result of Kind
// KindLabels). Labels that cannot be read or kept fail the step closed
// (a deny, reason code labels_unavailable).
func (d *Pipeline) Decide(ctx context.Context, ev *warden.Event) (warden.Outcome, error) {
	if p := warden.PrincipalFrom(ctx); p != (warden.Principal{}) {
		ev.Principal = p
	}
	ev.BuildViews(d.views)
	out := d.decideLabelled(ctx, ev)
	if d.store == nil {
		d.label(ctx, ev, &out)
	}
	var err error
	var stored *audit.Record // the record as stored; nil when not recorded
	if d.store != nil {
		rec := audit.NewRecord(ev, &out, time.Now())
		out.RecordID = rec.ID
		if d.shadow != nil {
			// The record's results only: the outcome answered never holds
			// them (a full slice expression, so out.Results is not written).
			rs := rec.Results
			rec.Results = append(rs[:len(rs):len(rs)], d.shadow.Shadow(ctx, ev, &out)...)
		}
		asked := out.Verdict.Holds() && d.appr != nil
		if asked {
			asked = d.retry(ctx, ev, &out, rec)
		}
		if d.label(ctx, ev, &out) { // refused: the labels could not be kept
			rec.Decision, rec.Reason, rec.ReasonCodes, rec.Output = out.Verdict.String(), out.Reason, out.ReasonCodes, nil
		}
		if len(out.LabelsAdded) > 0 {
			rs := rec.Results
			rec.Results = append(rs[:len(rs):len(rs)], warden.Result{Guardian: "session", Kind: warden.KindLabels,
				Decision: out.Verdict.String(), Mode: warden.Enforce.String(), Labels: out.LabelsAdded,
				Reason: "session labels added: " + strings.Join(out.LabelsAdded, ", ")})
		}
		if d.filter != nil {
			d.filter(rec)
		}
		// A step that was decided is recorded even if its caller went away
		// meanwhile (an audit trail of attempts), within a bounded wait.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
		rerr := d.store.Record(rctx, rec)
		cancel()
		if rerr != nil {
			err = fmt.Errorf("%w: %v", audit.ErrUnavailable, rerr)
			out = warden.Outcome{
				Verdict: warden.Deny, Reason: "decision not recorded: " + err.Error(),
				ReasonCodes: []string{warden.CodeTraceUnavailable}, Results: out.Results, Latency: out.Latency,
				// No RecordID: this decision is not in the trace.
			}
		} else {
			stored = rec
			if asked && out.Verdict.Holds() {
				d.open(ctx, ev, &out, rec)
			}
		}
	}
	if ro, ok := d.observer.(RecordObserver); ok {
		ro.ObserveRecord(ctx, ev, &out, stored, err)
	} else if d.observer != nil {
		d.observer.Observe(ev, &out, err)
	}
	if d.async != nil && (out.Verdict == warden.Allow || out.Verdict == warden.Modify) {
		final := ev
		if out.Verdict == warden.Modify && out.Payload != nil {
			final = ev.WithPayload(out.Payload)
		}
		d.async.RunAsync(final)
	}
	return out, err
}

// decideLabelled reads the session's labels into ev (with a LabelCache)
// and runs ev's chain; the outcome's labels include the provenance's.
func (d *Pipeline) decideLabelled(ctx context.Context, ev *warden.Event) warden.Outcome {
	chain := d.ChainFor(ev.Name)
	if d.labels == nil {
		return chain.Decide(ctx, ev)
	}
	var out warden.Outcome
	if ev.SessionID != "" && !d.usesLabels(chain, ev.Name) {
		// Nothing that decides this step looks at the session's labels:
		// they are not read (with a store replicas share, that is a query
		// a step). Asked again after the chain ran: a reload meanwhile may
		// have brought a policy that does, which then failed the step
		// (ErrLabelsUnread); it is decided again below, with them.
		ev.LabelsUnread = true
		out = chain.Decide(ctx, ev)
		if !d.usesLabels(chain, ev.Name) {
			return withProvenanceLabels(out, ev)
		}
		ev.LabelsUnread = false
	}
	ls, err := d.labels.Labels(ctx, ev.Principal.Tenant, ev.SessionID)
	if err != nil {
		return labelsUnavailable(warden.Outcome{}, err)
	}
	ev.SessionLabels = ls
	out = chain.Decide(ctx, ev)
	return withProvenanceLabels(out, ev)
}

// usesLabels reports whether deciding an event named event with chain, or
// the shadow set beside it, may read the session's labels.
func (d *Pipeline) usesLabels(chain *warden.Chain, event string) bool {
	if chain.UsesSessionLabels(event) {
		return true
	}
	if d.shadow == nil {
		return false
	}
	u, ok := d.shadow.(labels.User)
	return !ok || u.UsesSessionLabels(event)
}

// withProvenanceLabels adds the labels ev's data's provenance sets to out's.
func withProvenanceLabels(out warden.Outcome, ev *warden.Event) warden.Outcome {
	if pl := warden.ProvenanceLabels(ev.Provenance); len(pl) > 0 {
		out.Labels = labels.Merge(out.Labels, pl)
	}
	return out
}

// label keeps the labels a taken step sets for its session (see Decide)
// and notes them in out.LabelsAdded. It reports whether it changed the
// outcome: labels that could not be kept turn it into a deny.
func (d *Pipeline) label(ctx context.Context, ev *warden.Event, out *warden.Outcome) (refused bool) {
	if d.labels == nil || (out.Verdict != warden.Allow && out.Verdict != warden.Modify) {
		return false
	}
	if len(out.Labels) == 0 || ev.SessionID == "" {
		return false
	}
	if ev.LabelsUnread {
		// Not read for the chain; needed now to know which are new.
		ls, err := d.labels.Labels(ctx, ev.Principal.Tenant, ev.SessionID)
		if err != nil {
			*out = labelsUnavailable(*out, err)
			return true
		}
		ev.SessionLabels = ls
	}
	add := labels.Missing(ev.SessionLabels, out.Labels)
	if len(add) == 0 {
		return false
	}
	// Like the record: kept even if the caller went away, within a bound.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	_, err := d.labels.Add(lctx, ev.Principal.Tenant, ev.SessionID, add)
	cancel()
	if err != nil {
		*out = labelsUnavailable(*out, err)
		return true
	}
	out.LabelsAdded = add
	return false
}

// labelsUnavailable is the deny of a step whose session labels could not
// be read or kept.
func labelsUnavailable(out warden.Outcome, err error) warden.Outcome {
	return warden.Outcome{
		Verdict: warden.Deny, Reason: "session labels not available: " + err.Error(),
		ReasonCodes: []string{labels.CodeUnavailable}, PolicyID: out.PolicyID, PolicyVersion: out.PolicyVersion,
		Results: out.Results, PolicyRevision: out.PolicyRevision, Latency: out.Latency, Labels: out.Labels,
	}
}

// retry lets an asked step through when an approver approved the
// identical step before (an approval used once, within its TTL); names the
// pending approval of the identical step when it asks again before that is
// decided; otherwise names the approval Open will create. It reports
// whether a new approval is to be opened.
func (d *Pipeline) retry(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record) (open bool) {
	a, err := d.appr.Use(ctx, ev, rec.ID)
	switch {
	case err != nil:
		*out = approvalUnavailable(*out, err)
	case a != nil && a.State == approval.ApprovalApproved:
		*out = approval.Approved(*out, a)
	case a != nil: // pending: the same question, asked again
		out.ApprovalID = a.ID
	default:
		out.ApprovalID = approval.NewID()
		open = true
	}
	rec.Decision, rec.Reason, rec.ReasonCodes = out.Verdict.String(), out.Reason, out.ReasonCodes
	rec.ApprovalID = out.ApprovalID
	if out.Verdict == warden.Modify && out.Payload != nil && rec.Output == nil {
		rec.Output, _ = json.Marshal(out.Payload)
	}
	return open
}

// open creates the pending approval of an asked step once its record is in
// the trace; when it cannot be stored the step is refused.
func (d *Pipeline) open(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record) {
	if _, err := d.appr.Open(ctx, ev, out, rec); err != nil {
		*out = approvalUnavailable(*out, err)
	}
}

func approvalUnavailable(out warden.Outcome, err error) warden.Outcome {
	return warden.Outcome{
		Verdict: warden.Deny, Reason: "approval not available: " + err.Error(),
		ReasonCodes: []string{warden.CodeApprovalUnavailable}, PolicyID: out.PolicyID, PolicyVersion: out.PolicyVersion,
		Results: out.Results, PolicyRevision: out.PolicyRevision, Latency: out.Latency, RecordID: out.RecordID,
	}
}
