package warden

import (
	"context"
	"encoding/json"
	"time"
)

// Record is one decision in the trace, as /api/hooks/runs and `warden runs -o
// json` give it. It holds enough to replay the decision against other policies.
type Record struct {
	ID            string    `json:"id"`
	Time          time.Time `json:"time"`
	Event         string    `json:"event"`
	Surface       string    `json:"surface"`
	Direction     string    `json:"direction"`
	RequestID     string    `json:"request_id"`
	AgentID       string    `json:"agent_id"`
	SessionID     string    `json:"session_id"`
	TurnID        string    `json:"turn_id"`
	StepID        string    `json:"step_id"`
	Decision      string    `json:"decision"`
	Reason        string    `json:"reason"`
	ReasonCodes   []string  `json:"reason_codes,omitempty"`
	PolicyID      string    `json:"policy_id"`
	PolicyVersion string    `json:"policy_version"`
	// PolicyRevision is the content hash of the policy set that decided.
	PolicyRevision string          `json:"policy_revision"`
	Results        []Result        `json:"results"`
	LatencyUS      int64           `json:"latency_us"`
	Input          json.RawMessage `json:"input"`
	Output         json.RawMessage `json:"output,omitempty"`
	// Views are the policy views the decision was made on (Event.ViewsJSON).
	Views json.RawMessage `json:"views,omitempty"`
}

// Filter selects records. Zero fields match everything; Last caps the count
// (0 means the store's default).
type Filter struct {
	Session  string
	Event    string
	Decision string
	Last     int
}

// DefaultLast is the number of records Runs returns when Filter.Last is 0.
const DefaultLast = 100

// Store is the trace. Record returns only once r is durable — it survives the
// process being killed — so an answer is sent only for a recorded decision.
// Implementations batch concurrent Records into one commit (group commit) and
// bound the memory they hold for pending records.
type Store interface {
	// Record stores r durably. An error means r is not recorded.
	Record(ctx context.Context, r *Record) error
	// Runs returns the matching records, newest first.
	Runs(ctx context.Context, f Filter) ([]Record, error)
	// Close flushes pending records and releases the store.
	Close() error
}
