package pipeline

import (
	"context"
	"encoding/json"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
)

// The approval stages: an asked step (Ask or Defer) uses an approval given
// before for the identical step, or gets a new one, opened once the step
// is recorded. Approvals need the trace: a Pipeline without a Store has no
// approval stages.

// useApproval is the approval stage. An asked step is let through when an
// approver approved the identical step before (an approval used once,
// within its TTL); it names the pending approval of the identical step
// when it asks again before that is decided; otherwise it names the
// approval the open approval stage creates. The record follows the
// outcome.
func (p *Pipeline) useApproval(ctx context.Context, d *decision) {
	if !d.out.Verdict.Holds() {
		return
	}
	out, rec := &d.out, d.rec
	a, err := p.approvals.Use(ctx, d.ev, rec.ID)
	switch {
	case err != nil:
		*out = approvalUnavailable(*out, err)
	case a != nil && a.State == approval.ApprovalApproved:
		*out = approval.Approved(*out, a)
	case a != nil: // pending: the same question, asked again
		out.ApprovalID = a.ID
	default:
		out.ApprovalID = approval.NewID()
		d.open = true
	}
	rec.Decision, rec.Reason, rec.ReasonCodes = out.Verdict.String(), out.Reason, out.ReasonCodes
	rec.ApprovalID = out.ApprovalID
	if out.Verdict == warden.Modify && out.Payload != nil && rec.Output == nil {
		rec.Output, _ = json.Marshal(out.Payload)
	}
}

// openApproval is the open approval stage: the pending approval of an
// asked step is created once its record is in the trace; when it cannot
// be stored the step is refused.
func (p *Pipeline) openApproval(ctx context.Context, d *decision) {
	if !d.open || d.stored == nil || !d.out.Verdict.Holds() {
		return
	}
	if _, err := p.approvals.Open(ctx, d.ev, &d.out, d.rec); err != nil {
		d.out = approvalUnavailable(d.out, err)
	}
}

// approvalUnavailable is the deny of an asked step whose approval could
// not be used or kept.
func approvalUnavailable(out warden.Outcome, err error) warden.Outcome {
	return warden.Outcome{
		Verdict: warden.Deny, Reason: "approval not available: " + err.Error(),
		ReasonCodes: []string{warden.CodeApprovalUnavailable}, PolicyID: out.PolicyID, PolicyVersion: out.PolicyVersion,
		Results: out.Results, PolicyRevision: out.PolicyRevision, Latency: out.Latency, RecordID: out.RecordID,
	}
}
