// Package pipeline is warden's decision core: a Pipeline takes every event
// of every surface through the same stages, in this order —
//
//	views          the event's views and its caller (chain.go)
//	labels         the session's labels, read when the chain may use them (labels.go)
//	chain          the event's chain decides (chain.go)
//	outcome labels the labels the step's data sets; decided again with the
//	               session's labels if the chain turned out to read them (labels.go)
//	record         the trace record of the decision (record.go)
//	shadow         the shadow set's results, for the record only (shadow.go)
//	approval       an asked step: an approval given before, or a new one (approval.go)
//	keep labels    the labels a taken step sets, kept for its session (labels.go)
//	filter         the record filter, e.g. redaction (record.go)
//	store          the record stored, before the step is answered (record.go)
//	open approval  the new approval of an asked step, once it is recorded (approval.go)
//	observe        metrics and exporters (observe.go)
//	async          the event's async hooks, for a step that is taken (async.go)
//
// — each stage present only when its feature is (New lists them from the
// Options; Stages names them). A stage that fails fails the step closed:
// it becomes a deny with the stage's reason code.
package pipeline

import (
	"context"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/labels"
)

// Options are what a Pipeline is built from. Every field may be left zero:
// that feature is then absent and its stages do not run.
type Options struct {
	// Chain decides the events Router does not route elsewhere; nil is the
	// empty chain, which allows every event (warden.NewChain).
	Chain *warden.Chain
	// Router picks the chain of each event (hooks declared per event); nil
	// means Chain for all.
	Router Router
	// Views builds each event's views (catalog.Views in production); nil
	// builds none.
	Views warden.ViewBuilder
	// Store records every decision before it is answered; nil means no
	// trace (`warden eval`): nothing is recorded, and there is no shadow
	// set, record filter or approval.
	Store audit.Store
	// RecordFilter changes every record before it is stored (redaction).
	RecordFilter audit.RecordFilter
	// Shadow decides every recorded event again by a candidate policy set,
	// for the record only.
	Shadow Shadow
	// Approvals keeps the approvals of asked steps. Without it (or without
	// a Store) an asked step gets no approval, and every surface refuses it.
	Approvals approval.Approvals
	// Labels keeps the sessions' labels. Without it none are read or kept,
	// and session.labels is always empty.
	Labels *labels.Cache
	// Observer is told of every decision (metrics, exporters).
	Observer Observer
	// Async runs the async hooks of every step that is taken.
	Async Async
}

// Pipeline is the decision core (see the package doc). A decision that
// cannot be recorded becomes a deny with reason code trace_unavailable
// (fail closed, never silently unrecorded). It is safe for concurrent use.
type Pipeline struct {
	chain     *warden.Chain
	router    Router
	views     warden.ViewBuilder
	store     audit.Store
	filter    audit.RecordFilter
	shadow    Shadow
	approvals approval.Approvals
	labels    *labels.Cache
	observer  RecordObserver
	async     Async
	stages    []stage
}

// New returns the Pipeline of o's features.
func New(o Options) *Pipeline {
	p := &Pipeline{chain: o.Chain, router: o.Router, views: o.Views, store: o.Store, filter: o.RecordFilter,
		shadow: o.Shadow, approvals: o.Approvals, labels: o.Labels, async: o.Async}
	if p.chain == nil {
		p.chain = warden.NewChain(warden.Allow)
	}
	if o.Observer != nil {
		p.observer = recordObserver(o.Observer)
	}
	p.stages = p.plan()
	return p
}

// decision is one event on its way through the stages.
type decision struct {
	ev      *warden.Event
	chain   *warden.Chain // the event's chain
	out     warden.Outcome
	refused bool          // a stage before the chain refused the step: out is its deny, the chain does not run
	rec     *audit.Record // the record to store; nil without a Store
	open    bool          // an approval is to be opened once rec is stored
	stored  *audit.Record // rec once stored; nil when not recorded
	err     error         // why the decision is not recorded (wraps audit.ErrUnavailable)
}

// A stage is one step of every decision.
type stage struct {
	name string
	run  func(p *Pipeline, ctx context.Context, d *decision)
}

// plan lists the stages of p's decisions, in order: those of the features
// p has.
func (p *Pipeline) plan() []stage {
	recorded := p.store != nil
	all := []struct {
		on bool
		stage
	}{
		{true, stage{"views", (*Pipeline).buildViews}},
		{p.labels != nil, stage{"labels", (*Pipeline).readLabels}},
		{true, stage{"chain", (*Pipeline).runChain}},
		{p.labels != nil, stage{"outcome labels", (*Pipeline).outcomeLabels}},
		{recorded, stage{"record", (*Pipeline).newRecord}},
		{recorded && p.shadow != nil, stage{"shadow", (*Pipeline).runShadow}},
		{recorded && p.approvals != nil, stage{"approval", (*Pipeline).useApproval}},
		{p.labels != nil, stage{"keep labels", (*Pipeline).keepLabels}},
		{recorded && p.filter != nil, stage{"filter", (*Pipeline).filterRecord}},
		{recorded, stage{"store", (*Pipeline).storeRecord}},
		{recorded && p.approvals != nil, stage{"open approval", (*Pipeline).openApproval}},
		{p.observer != nil, stage{"observe", (*Pipeline).observe}},
		{p.async != nil, stage{"async", (*Pipeline).runAsync}},
	}
	var stages []stage
	for _, s := range all {
		if s.on {
			stages = append(stages, s.stage)
		}
	}
	return stages
}

// Stages names the stages every decision of p goes through, in order (see
// the package doc).
func (p *Pipeline) Stages() []string {
	names := make([]string, len(p.stages))
	for i, s := range p.stages {
		names[i] = s.name
	}
	return names
}

// Decide takes ev through the stages and returns its outcome. The error
// wraps audit.ErrUnavailable when the outcome could not be recorded; the
// Outcome is then a deny.
//
// Decide builds ev's views (whatever the surface put in them is replaced),
// so every surface shows policies the same variables for the same step.
//
// With Labels, Decide reads the session's labels into ev.SessionLabels
// before the chain runs, and once the outcome is known (after an approved
// retry), keeps the labels the step sets (Outcome.Labels: its policies'
// label: actions, and its data's provenance, see ProvenanceLabels) — only
// when the step is taken (Allow or Modify), because only then did its
// content flow; a refused or held step sets none. New labels are written
// to the store before the step is recorded and answered, and the record
// lists them (a result of Kind KindLabels). Labels that cannot be read or
// kept fail the step closed (a deny, reason code labels_unavailable).
func (p *Pipeline) Decide(ctx context.Context, ev *warden.Event) (warden.Outcome, error) {
	d := &decision{ev: ev, chain: p.chainFor(ev.Name)}
	for _, s := range p.stages {
		s.run(p, ctx, d)
	}
	return d.out, d.err
}
