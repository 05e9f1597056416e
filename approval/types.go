package approval

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"

	"github.com/google/uuid"
)

// Approved returns what an asked outcome becomes once a approved it: the
// step is taken (a modify when a guardian changed its payload, an allow
// otherwise), its reason naming the approver.
func Approved(out warden.Outcome, a *Approval) warden.Outcome {
	out.Verdict = warden.Allow
	if out.Payload != nil {
		out.Verdict = warden.Modify
	}
	by := a.DecidedBy
	if by == "" {
		by = "an approver"
	}
	out.Reason = "approved by " + by
	if a.DecidedReason != "" {
		out.Reason += ": " + a.DecidedReason
	}
	out.ReasonCodes = append([]string{warden.CodeApprovalGranted}, out.ReasonCodes...)
	out.ApprovalID = a.ID
	return out
}

// NewID returns a fresh approval id (a time-ordered UUID).
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return id.String()
}

// ApprovalState is where an approval is in its life: pending until someone
// decides it or it expires.
type ApprovalState string

// The approval states (docs/approvals.md).
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
)

// Approval is a step a policy or hook asked a human about (decision ask),
// as the store keeps it and /api/approvals gives it (docs/approvals.md).
type Approval struct {
	ID      string        `json:"id"`
	State   ApprovalState `json:"state"`
	Event   string        `json:"event"`
	Surface string        `json:"surface"`
	// SessionID, AgentID and Tool are the step's session, agent and tool
	// name ("" where the step has none).
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	Tool      string `json:"tool"`
	// Summary is a one-line description of the step, redacted as the
	// trace is.
	Summary  string    `json:"summary"`
	Reason   string    `json:"reason"`
	PolicyID string    `json:"policy_id"`
	Created  time.Time `json:"created"`
	// Expires is when a pending approval expires: for a held call, when the
	// caller stops waiting; for a step answered at once, when the window to
	// approve it closes.
	Expires time.Time `json:"expires"`
	// DecidedBy, DecidedReason and DecidedAt say who decided (a token's name,
	// "" without auth), why, and when; empty while pending. An approval that
	// expired has DecidedAt and DecidedReason (e.g. "approval_timeout",
	// "withdrawn: the caller hung up") and no DecidedBy.
	DecidedBy     string    `json:"decided_by"`
	DecidedReason string    `json:"decided_reason"`
	DecidedAt     time.Time `json:"decided_at,omitzero"`
	// RecordID is the trace record of the decision that asked.
	RecordID string `json:"record_id"`
	// DecisionRecordID is the trace record of the approval's own decision
	// (approve, deny or expiry), once there is one.
	DecisionRecordID string `json:"decision_record_id,omitempty"`
	// Caller and Tenant are the asking step's principal; a tenant's token
	// sees and decides only its tenant's approvals.
	Caller string `json:"caller"`
	Tenant string `json:"tenant"`
	// Key identifies the step for a retry (the same session, event, tool
	// and canonical arguments give the same key): an approved step answered
	// at once may be retried once, within the TTL, by a step with this key.
	// It is "" for a held call: the call released is what was approved.
	Key string `json:"key"`
	// Hold is true when the asking surface holds the call open while the
	// approval is pending (MCP, A2A, hook dispatch); false when it answered
	// at once (AOS) and expects a retry.
	Hold bool `json:"hold"`
	// UsedAt is when an approved step answered at once was retried and
	// allowed (an approval allows one retry); zero until then. UsedRecordID
	// is that retry's trace record.
	UsedAt       time.Time `json:"used_at,omitzero"`
	UsedRecordID string    `json:"used_record_id,omitempty"`
}

// Decided reports whether a is no longer pending.
func (a *Approval) Decided() bool { return a.State != ApprovalPending }

// ApprovalQuery selects approvals for ListApprovals, newest first. Zero
// fields match everything.
type ApprovalQuery struct {
	State  ApprovalState
	Tenant string
	// Session keeps only the approvals of this session (a session's
	// timeline shows them inline).
	Session string
	// After is an approval id: the listing continues after it (paging);
	// an unknown id is ErrUnknownCursor.
	After string
	// Limit bounds the answer; <= 0 means DefaultListLimit, more than
	// MaxListLimit means MaxListLimit (EffectiveLimit).
	Limit int
}

// Bounds of a listing (ApprovalQuery.Limit).
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// EffectiveLimit is how many approvals a store lists for q: q.Limit,
// DefaultListLimit when it is <= 0, at most MaxListLimit.
func (q ApprovalQuery) EffectiveLimit() int {
	if q.Limit <= 0 {
		return DefaultListLimit
	}
	return min(q.Limit, MaxListLimit)
}

// Errors of an ApprovalStore.
var (
	// ErrApprovalNotFound: no approval with that id.
	ErrApprovalNotFound = errors.New("warden: no approval with that id")
	// ErrApprovalDecided: the approval is no longer pending (decided or
	// expired), so it cannot be decided again.
	ErrApprovalDecided = errors.New("warden: approval already decided or expired")
)

// ApprovalStore keeps approvals durably, beside the trace (Rules, over each
// backend's Rows; storetest.RunApprovals is its contract). Every state change
// is a compare-and-set on the stored state, so two replicas or two approvers
// can never both decide one approval. Times are kept in UTC, to the
// microsecond. An approval is expired when its Expires is before the time at
// hand; an approval that expires gets DecidedAt, DecidedReason
// "approval_timeout" and no DecidedBy.
type ApprovalStore interface {
	// CreateApproval stores a copy of a new approval, pending: a.State
	// must be pending or empty, and a.ID new.
	CreateApproval(ctx context.Context, a *Approval) error
	// Approval returns the approval with id, or ErrApprovalNotFound.
	Approval(ctx context.Context, id string) (*Approval, error)
	// ListApprovals returns the approvals q selects, newest first (by
	// Created, then id, both descending); the slice is never nil.
	ListApprovals(ctx context.Context, q ApprovalQuery) ([]Approval, error)
	// DecideApproval moves a pending approval to state (approved, denied or
	// expired) with by, reason and at, and returns it as stored. An
	// approval that is not pending is ErrApprovalDecided (it is returned
	// too, as stored); an unknown id is ErrApprovalNotFound. A pending
	// approval whose Expires is before at can only be expired: approving
	// or denying it expires it instead, as ExpireApprovals at `at` would
	// (by and reason are not stored), and returns it with
	// ErrApprovalDecided. Expiring is allowed before Expires too (a held
	// call whose caller hung up).
	DecideApproval(ctx context.Context, id string, state ApprovalState, by, reason string, at time.Time) (*Approval, error)
	// SetDecisionRecord links an approval to the trace record of its own
	// decision (a later call replaces the link); an unknown id is
	// ErrApprovalNotFound.
	SetDecisionRecord(ctx context.Context, id, recordID string) error
	// UseApproval finds the approved, unused approval with key whose
	// DecidedAt is at or after notBefore, marks it used at `at` by the
	// record recordID, and returns it (the earliest decided, if several
	// are); none, or an empty key, is (nil, nil). At most one caller ever
	// gets a given approval.
	UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*Approval, error)
	// ExpireApprovals moves every pending approval whose Expires is before
	// at to expired (DecidedAt at, DecidedReason "approval_timeout"), and
	// returns them, oldest Created first.
	ExpireApprovals(ctx context.Context, at time.Time) ([]Approval, error)
}

// Approvals keeps the approvals of asked steps for a Decider (package
// approval implements it).
type Approvals interface {
	// Use returns the approval that answers the asked step ev: the
	// approved, unused approval of the identical step (a retry within the
	// TTL), marked used by the record recordID; or the pending approval of
	// the identical step answered at once (it asks again: no second
	// approval); nil when there is none. An error refuses the step (e.g.
	// too many approvals pending in its session).
	Use(ctx context.Context, ev *warden.Event, recordID string) (*Approval, error)
	// Open creates the pending approval rec.ApprovalID for the asked step
	// ev, whose record rec is in the trace.
	Open(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record) (*Approval, error)
	// Await holds a step that asked (out.ApprovalID pending) until the
	// approval is decided, it expires or ctx ends, and returns what the
	// surface answers: the asked outcome as an allow (or modify) when
	// approved, a deny otherwise.
	Await(ctx context.Context, out warden.Outcome) warden.Outcome
}

// Holder is a Core that can hold an asked step until it is decided (a
// Guardian with approvals).
type Holder interface {
	Await(ctx context.Context, out warden.Outcome) warden.Outcome
}

// Settle returns what a surface that can hold a call answers for out: an
// asked step with a pending approval is held until decided when core can
// hold it; any other held outcome is refused (Outcome.WithoutHold); the rest
// is returned as it is.
func Settle(ctx context.Context, core warden.Core, out warden.Outcome) warden.Outcome {
	if out.Verdict.Holds() && out.ApprovalID != "" {
		if h, ok := core.(Holder); ok {
			return h.Await(ctx, out)
		}
	}
	return out.WithoutHold()
}

type holdKey struct{}

// WithHoldDeadline returns ctx carrying extend, which a holder calls with
// the time it may hold the call until, before it waits: an HTTP surface
// extends its write deadline with it (the server's write timeout is shorter
// than approvals.wait).
func WithHoldDeadline(ctx context.Context, extend func(until time.Time)) context.Context {
	return context.WithValue(ctx, holdKey{}, extend)
}

// ExtendHold calls the extend function ctx carries (WithHoldDeadline), if
// any.
func ExtendHold(ctx context.Context, until time.Time) {
	if f, ok := ctx.Value(holdKey{}).(func(time.Time)); ok {
		f(until)
	}
}
