package warden

import (
	"encoding/json"
	"time"
)

// Decision is one guardian's answer about one event.
type Decision struct {
	Verdict       Verdict
	Reason        string
	ReasonCodes   []string // ids of the deciding policies, or chain codes
	PolicyID      string   // the first deciding policy, as reported on the wire
	PolicyVersion string
	// Payload is the changed payload when Verdict is Modify.
	Payload map[string]any
	// Results are the per-policy results behind the decision, audit ones
	// included; the chain adds one for the guardian itself when this is empty.
	Results []Result
	// Revision identifies the policy set that decided (a content hash), for
	// guardians that have one.
	Revision string
	// Labels are the session labels the step sets if it is taken (a
	// policy's label: action), sorted; any verdict, Abstain included, may
	// carry them.
	Labels []string
}

// Result is one entry of a trace record: what one guardian, or one policy of
// the policy guardian, decided (or would have decided, in audit mode).
type Result struct {
	Guardian      string `json:"guardian"`
	PolicyID      string `json:"policy_id,omitempty"`
	PolicyVersion string `json:"policy_version,omitempty"`
	Decision      string `json:"decision"`
	Mode          string `json:"mode"`
	Reason        string `json:"reason,omitempty"`
	LatencyUS     int64  `json:"latency_us"`
	Error         string `json:"error"`
	// Kind is the handler kind of a hook (policy, command, webhook, aos).
	Kind string `json:"kind,omitempty"`
	// Patch is the patch a hook returned (JSON), applied or refused.
	Patch json.RawMessage `json:"patch,omitempty"`
	// Refused names why a returned patch was not applied (e.g.
	// "escalation_refused: ..."); empty when it was applied or there was none.
	Refused string `json:"refused,omitempty"`
	// PolicyRevision is the revision of the policy set a shadow set's
	// summary result (KindShadowSet) decided by; empty on other results.
	PolicyRevision string `json:"policy_revision,omitempty"`
	// Labels are the session labels a policy's label: action names (on
	// its result), or those a step added to its session (on the result
	// of Kind KindLabels).
	Labels []string `json:"labels,omitempty"`
}

// Outcome is the chain's composed answer for one event: Allow, Deny, Modify,
// Ask or Defer. Each surface maps it to its wire; Ask and Defer hold the step
// for someone to decide (until approvals exist, every surface answers them
// as a deny with reason code approval_required: see Refusal).
type Outcome struct {
	Verdict       Verdict
	Reason        string
	ReasonCodes   []string
	PolicyID      string
	PolicyVersion string
	// Payload is the final payload when Verdict is Modify, and the payload
	// that would be taken when Verdict is Ask or Defer and a guardian changed
	// it (nil when unchanged).
	Payload map[string]any
	// Results lists every guardian's and policy's result, in run order.
	Results []Result
	// PolicyRevision is the Revision of the policy set that decided.
	PolicyRevision string
	Latency        time.Duration
	// RecordID is the id of the trace record, once recorded.
	RecordID string
	// ApprovalID is the approval an Ask created (pending), or the approval
	// that let an asked step through (an approved retry); "" otherwise.
	ApprovalID string
	// Labels are the session labels the step sets, sorted: those its
	// policies named (the chain merges them) and, once the Decider has
	// decided, those the provenance of its data sets. The Decider keeps
	// them for the session only when the step is taken (Allow, Modify).
	Labels []string
	// LabelsAdded are the labels the Decider added to the session for this
	// step (those of Labels it did not hold yet), as its record lists them.
	LabelsAdded []string
}

// WithoutHold returns o with an Ask or Defer turned into what a surface
// that cannot hold the step answers: a deny whose first reason code is
// approval_required (the verdict held is kept in the trace). Until approvals
// exist every surface maps held outcomes through it; other outcomes are
// returned as they are.
func (o Outcome) WithoutHold() Outcome {
	if !o.Verdict.Holds() {
		return o
	}
	if o.Reason == "" {
		o.Reason = "approval required"
	}
	codes := make([]string, 0, len(o.ReasonCodes)+1)
	codes = append(codes, CodeApprovalRequired)
	for _, c := range o.ReasonCodes {
		if c != CodeApprovalRequired {
			codes = append(codes, c)
		}
	}
	o.Verdict, o.ReasonCodes, o.Payload = Deny, codes, nil
	return o
}
