package pipeline

import (
	"context"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/labels"
)

// The label stages (with Options.Labels): a session's labels are read
// before the chain runs when something that decides the step may use
// them; the outcome's labels are its policies' label: actions plus those
// its data's provenance sets; a step that is taken keeps its new labels
// for its session before it is recorded and answered. Labels that cannot
// be read or kept fail the step closed (a deny, reason code
// labels_unavailable).

// readLabels is the labels stage: the session's labels are read into the
// event — unless nothing that decides this step looks at them (with a
// store replicas share, that is a query a step): they are then marked
// unread (Event.LabelsUnread), and the outcome labels stage looks again.
func (p *Pipeline) readLabels(ctx context.Context, d *decision) {
	if d.ev.SessionID != "" && !p.usesLabels(d.chain, d.ev.Name) {
		d.ev.LabelsUnread = true
		return
	}
	p.loadLabels(ctx, d)
}

// outcomeLabels is the outcome labels stage. Labels left unread that the
// chain uses after all — a reload between the labels stage and the chain
// brought a policy that does, which then failed the step (labels.ErrUnread)
// — are read, and the step is decided again with them. Then the labels
// the step's data's provenance sets join the outcome's.
func (p *Pipeline) outcomeLabels(ctx context.Context, d *decision) {
	if d.refused {
		return
	}
	if d.ev.LabelsUnread && p.usesLabels(d.chain, d.ev.Name) {
		d.ev.LabelsUnread = false
		if !p.loadLabels(ctx, d) {
			return
		}
		d.out = d.chain.Run(ctx, d.ev)
	}
	if pl := warden.ProvenanceLabels(d.ev.Provenance); len(pl) > 0 {
		d.out.Labels = labels.Merge(d.out.Labels, pl)
	}
}

// loadLabels reads the session's labels into the event; when they cannot
// be read, the step is refused.
func (p *Pipeline) loadLabels(ctx context.Context, d *decision) bool {
	ls, err := p.labels.Labels(ctx, d.ev.Principal.Tenant, d.ev.SessionID)
	if err != nil {
		d.out, d.refused = labelsUnavailable(warden.Outcome{}, err), true
		return false
	}
	d.ev.SessionLabels = ls
	return true
}

// usesLabels reports whether deciding an event named event with chain, or
// the shadow set beside it, may read the session's labels.
func (p *Pipeline) usesLabels(chain *warden.Chain, event string) bool {
	if chain.UsesSessionLabels(event) {
		return true
	}
	if p.shadow == nil {
		return false
	}
	u, ok := p.shadow.(labels.User)
	return !ok || u.UsesSessionLabels(event)
}

// keepLabels is the keep labels stage: a step that is taken (Allow or
// Modify: only then did its content flow) keeps the labels it sets that
// its session does not have yet, and its record lists them (a result of
// Kind KindLabels, the outcome's LabelsAdded); a refused or held step sets
// none. Labels that cannot be kept turn the step into a deny, in its
// record too.
func (p *Pipeline) keepLabels(ctx context.Context, d *decision) {
	if !p.addLabels(ctx, d.ev, &d.out) {
		if d.rec != nil {
			d.rec.Decision, d.rec.Reason, d.rec.ReasonCodes, d.rec.Output = d.out.Verdict.String(), d.out.Reason, d.out.ReasonCodes, nil
		}
		return
	}
	if d.rec != nil && len(d.out.LabelsAdded) > 0 {
		d.recordResults(warden.Result{Guardian: "session", Kind: warden.KindLabels,
			Decision: d.out.Verdict.String(), Mode: warden.Enforce.String(), Labels: d.out.LabelsAdded,
			Reason: "session labels added: " + strings.Join(d.out.LabelsAdded, ", ")})
	}
}

// addLabels adds the new labels of a taken step to its session and notes
// them in out.LabelsAdded. It reports false when they could not be kept:
// out is then the deny.
func (p *Pipeline) addLabels(ctx context.Context, ev *warden.Event, out *warden.Outcome) bool {
	if out.Verdict != warden.Allow && out.Verdict != warden.Modify {
		return true
	}
	if len(out.Labels) == 0 || ev.SessionID == "" {
		return true
	}
	if ev.LabelsUnread {
		// Not read for the chain; needed now to know which are new.
		ls, err := p.labels.Labels(ctx, ev.Principal.Tenant, ev.SessionID)
		if err != nil {
			*out = labelsUnavailable(*out, err)
			return false
		}
		ev.SessionLabels = ls
	}
	add := labels.Missing(ev.SessionLabels, out.Labels)
	if len(add) == 0 {
		return true
	}
	// Like the record: kept even if the caller went away, within a bound.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	_, err := p.labels.Add(lctx, ev.Principal.Tenant, ev.SessionID, add)
	cancel()
	if err != nil {
		*out = labelsUnavailable(*out, err)
		return false
	}
	out.LabelsAdded = add
	return true
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
