package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden"
)

// Record is one decision in the trace, as /api/hooks/runs and `warden runs -o
// json` give it. It holds enough to replay the decision against other policies.
type Record struct {
	ID            string          `json:"id"`
	Time          time.Time       `json:"time"`
	Event         string          `json:"event"`
	Surface       string          `json:"surface"`
	Direction     string          `json:"direction"`
	RequestID     string          `json:"request_id"`
	AgentID       string          `json:"agent_id"`
	SessionID     string          `json:"session_id"`
	TurnID        string          `json:"turn_id"`
	StepID        string          `json:"step_id"`
	Decision      string          `json:"decision"`
	Reason        string          `json:"reason"`
	ReasonCodes   []string        `json:"reason_codes,omitempty"`
	PolicyID      string          `json:"policy_id"`
	PolicyVersion string          `json:"policy_version"`
	Results       []warden.Result `json:"results"`
	LatencyUS     int64           `json:"latency_us"`
	Input         json.RawMessage `json:"input"`
	Output        json.RawMessage `json:"output,omitempty"`
	// PolicyRevision is the sha256 of the compiled policy set that decided.
	PolicyRevision string `json:"policy_revision"`
	// Views are the CEL views the decision was made on, a JSON object,
	// stored verbatim.
	Views json.RawMessage `json:"views,omitempty"`
	// Caller is the authenticated principal that asked (a token's name);
	// "" when the server has no auth.
	Caller string `json:"caller"`
	// Tenant is the caller's tenant; "" for none.
	Tenant string `json:"tenant"`
	// ApprovalID links the record to an approval: the one an ask created,
	// the one an approved retry used, or the one whose own decision this
	// record is (Surface SurfaceApproval).
	ApprovalID string `json:"approval_id,omitempty"`
	// Tool is the name of the tool the step calls or answers (the event's
	// tool view, Event.Tool.Name); "" when the step is not a tool call.
	Tool string `json:"tool"`
	// Sealed holds the originals of the values the redaction replaced in
	// this record, each sealed (package seal, docs/security.md): a JSON
	// object from a mark's "kind:tag" (the [REDACTED:kind:tag] it
	// replaced) to the sealed envelope in unpadded base64url, members
	// sorted by name; empty when nothing was redacted or sealing is off.
	// The hash chain covers these bytes, so verify needs no key;
	// opening them needs the KEK (package unseal).
	Sealed json.RawMessage `json:"sealed,omitempty"`
	// PrevHash and Hash chain the trace (docs/verify.md): Hash is the
	// lowercase hex SHA-256 over the record's canonical content and
	// PrevHash, the Hash of the record stored before it ("" for the first).
	// The store computes both as it commits and gives them in the records
	// it reads back; Record ignores them in the record it is given and
	// does not fill them in. "" in records from before the chain.
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
}

// Query selects and orders the records a Scan visits. Zero fields match
// everything: a record matches when it has every non-empty string field
// (ID, Session its SessionID, Event, Decision, Surface, Policy its
// PolicyID, Agent its AgentID, Tool, Tenant), its Time is in [Since, Until)
// where those are set, it contains Text (see TextMatcher) when that is
// set, and its shadow set disagreed when ShadowDisagrees is set.
// Query.Matcher decides the same in memory.
//
// Records are visited in the order they were recorded (insertion order;
// several processes writing one store share one order), newest first unless
// Oldest. That order is total and stable, which is what paging needs; it
// follows Time only as closely as recording follows the decisions.
type Query struct {
	Session, Event, Decision, Surface, Policy, Agent, Tool string
	Since, Until                                           time.Time
	// Text keeps the records that contain it, ignoring case, in their
	// Reason, Event, Tool, SessionID, AgentID, PolicyID or Input (the JSON
	// text as stored): see TextMatcher for exactly how.
	Text string
	// After is a record id: the scan continues after that record,
	// exclusive, in the scan's order; that record need not match the
	// other fields. An id the store does not hold fails the scan with
	// ErrUnknownCursor. Paging with After never skips or repeats a record,
	// also while records are being added: newest first, records added
	// after the first page come before it, never between pages; oldest
	// first, they come at the end.
	After string
	// Oldest visits the oldest records first.
	Oldest bool
	// Tenant keeps only the records of this tenant ("" for any): a tenant's
	// read token is held to its own tenant's records.
	Tenant string
	// ID keeps only the record with this id (GET /api/runs/{id}).
	ID string
	// ShadowDisagrees keeps only the records decided beside a shadow set
	// whose verdict differs from the decision recorded (see
	// Record.ShadowDisagrees; /api/runs?disagree=shadow).
	ShadowDisagrees bool
	// Budget, when positive, bounds the time a Scan spends looking: once
	// Budget has passed since Scan began, it stops after the record it is
	// examining (read to be tested against the query, matching or not) and
	// returns a *ScanStopped naming that record, unless the records have
	// ended. A scan examines at least one record, so resuming with After
	// always progresses. A store may examine the records its indexes rule
	// out (SQLite: every column filter) in one step it cannot stop, so a
	// scan may overrun Budget by one such step. Zero: no bound.
	Budget time.Duration
}

// ScanStopped is the error of a Scan that spent its Query.Budget before the
// matching records ended: the records it gave fn are all the matches up to
// After, and a Scan of the same Query with After set to this After (in the
// same order) continues with the next record, neither skipping nor
// repeating one.
type ScanStopped struct {
	After   string // the last record examined
	Scanned int    // records examined, matching or not
}

func (e *ScanStopped) Error() string {
	return fmt.Sprintf("warden: scan stopped at its time budget after examining %d records (resume after %s)", e.Scanned, e.After)
}

// Matcher returns a function that reports whether a record matches q as
// Scan decides (every field but After, Oldest and Budget). Followers that
// read every new record once and filter it themselves (the runs stream,
// `warden runs --follow`) use it. The function is not safe for concurrent
// use: Text's matcher keeps a scratch buffer.
func (q Query) Matcher() func(*Record) bool {
	var text *TextMatcher
	if q.Text != "" {
		text = NewTextMatcher(q.Text)
	}
	return func(r *Record) bool {
		eq := func(want, got string) bool { return want == "" || want == got }
		return eq(q.ID, r.ID) && eq(q.Session, r.SessionID) && eq(q.Event, r.Event) &&
			eq(q.Decision, r.Decision) && eq(q.Surface, r.Surface) && eq(q.Policy, r.PolicyID) &&
			eq(q.Agent, r.AgentID) && eq(q.Tool, r.Tool) && eq(q.Tenant, r.Tenant) &&
			(q.Since.IsZero() || !r.Time.Before(q.Since)) && (q.Until.IsZero() || r.Time.Before(q.Until)) &&
			(!q.ShadowDisagrees || r.ShadowDisagrees()) && (text == nil || text.Match(r))
	}
}

// ErrUnknownCursor is returned by Scan for a Query.After the store does not
// hold.
var ErrUnknownCursor = errors.New("warden: unknown cursor: no record with that id")

// Store is the trace. Record returns only once r is durable — it survives the
// process being killed — so an answer is sent only for a recorded decision.
// Implementations batch concurrent Records into one commit (group commit) and
// bound the memory they hold for pending records.
type Store interface {
	// Record stores r durably. An error means r is not recorded.
	Record(ctx context.Context, r *Record) error
	// Scan calls fn with each record matching q, in q's order, until fn
	// returns false, the records end, or ctx is done (then ctx.Err()). fn
	// may keep the record it is given. Scan holds no lock and no read
	// transaction while fn runs, and does not load the records ahead of
	// fn: a scan over many records streams them.
	Scan(ctx context.Context, q Query, fn func(*Record) bool) error
	// Close flushes pending records and releases the store.
	Close() error
}

// Collect returns the first n records Scan visits for q (fewer if there are
// fewer); n <= 0 gives none. The slice is never nil.
func Collect(ctx context.Context, s Store, q Query, n int) ([]Record, error) {
	out := []Record{}
	if n <= 0 {
		return out, nil
	}
	err := s.Scan(ctx, q, func(r *Record) bool {
		out = append(out, *r)
		return len(out) < n
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordFilter changes a record before it is stored (redact.RecordFilter
// replaces secrets and seals their originals). It may replace the record's
// fields but must not write into the bytes or slices they hold: those are
// shared with the outcome the caller gets. An error means the record could
// not be made fit to store (its originals could not be sealed): the record
// is not stored, as when the store fails. ctx is the decision's: a filter
// that waits on something bounds its own wait and outlives a caller that
// went away (a decided step is recorded), as Store.Record's callers do.
type RecordFilter func(ctx context.Context, rec *Record) error
