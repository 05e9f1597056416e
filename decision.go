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
}

// Outcome is the chain's composed answer for one event. Verdict is Allow, Deny
// or Modify: Ask becomes Deny with reason code approval_required.
type Outcome struct {
	Verdict       Verdict
	Reason        string
	ReasonCodes   []string
	PolicyID      string
	PolicyVersion string
	// Payload is the final payload when Verdict is Modify.
	Payload map[string]any
	// Results lists every guardian's and policy's result, in run order.
	Results []Result
	Latency time.Duration
	// RecordID is the id of the trace record, once recorded.
	RecordID string
}
