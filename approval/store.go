package approval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
)

// Rows is an approvals table as a backend keeps it (SQL in
// internal/tracesql, a map in storetest): Rules holds the rules, Rows only
// moves rows, each call atomic on its own, keeping the times it is given
// (UTC, to the microsecond) and giving back copies.
type Rows interface {
	// Insert adds a, unless a row with its id exists (false).
	Insert(ctx context.Context, a *Approval) (bool, error)
	// Select returns the first limit rows f selects, in order o.
	Select(ctx context.Context, f Filter, o Order, limit int) ([]Approval, error)
	// Update applies c to the rows f selects and returns them as changed,
	// a compare-and-set: a row a concurrent Update changed is changed
	// again only if f still selects it.
	Update(ctx context.Context, f Filter, c Change) ([]Approval, error)
	// Writable is the error a change would fail with now, or nil.
	Writable() error
}

// Filter selects the rows for which every field that is not zero holds:
// Expires is before ExpiresBefore, not before ExpiresFrom; DecidedAt not
// before DecidedFrom; Unused: UsedAt zero; After: after it, NewestFirst.
type Filter struct {
	ID, Tenant, Session, Key                string
	State                                   ApprovalState
	Unused                                  bool
	ExpiresBefore, ExpiresFrom, DecidedFrom time.Time
	After                                   *Approval
}

// Match reports whether f selects a.
func (f Filter) Match(a *Approval) bool {
	return (f.ID == "" || a.ID == f.ID) && (f.Tenant == "" || a.Tenant == f.Tenant) &&
		(f.Session == "" || a.SessionID == f.Session) && (f.Key == "" || a.Key == f.Key) &&
		(f.State == "" || a.State == f.State) && (!f.Unused || a.UsedAt.IsZero()) &&
		(f.ExpiresBefore.IsZero() || a.Expires.Before(f.ExpiresBefore)) &&
		(f.ExpiresFrom.IsZero() || !a.Expires.Before(f.ExpiresFrom)) &&
		(f.DecidedFrom.IsZero() || !a.DecidedAt.Before(f.DecidedFrom)) &&
		(f.After == nil || NewestFirst.Compare(a, f.After) > 0)
}

// Order is an order of rows.
type Order int

// NewestFirst is ListApprovals' order (Created, then id, descending),
// FirstDecided the one retries use approvals in (DecidedAt, then id).
const (
	NewestFirst Order = iota
	FirstDecided
)

// Compare is negative when a comes before b in order o, positive after.
func (o Order) Compare(a, b *Approval) int {
	if o == FirstDecided {
		return cmp.Or(a.DecidedAt.Compare(b.DecidedAt), strings.Compare(a.ID, b.ID))
	}
	return cmp.Or(b.Created.Compare(a.Created), strings.Compare(b.ID, a.ID))
}

// Change is what Update writes: the decision when State is set, the use
// when UsedAt is, the decision record when DecisionRecordID is.
type Change struct {
	State                    ApprovalState
	DecidedBy, DecidedReason string
	DecidedAt, UsedAt        time.Time
	UsedRecordID             string
	DecisionRecordID         *string
}

// Apply writes c to a.
func (c Change) Apply(a *Approval) {
	if c.State != "" {
		a.State, a.DecidedBy, a.DecidedReason, a.DecidedAt = c.State, c.DecidedBy, c.DecidedReason, c.DecidedAt
	}
	if !c.UsedAt.IsZero() {
		a.UsedAt, a.UsedRecordID = c.UsedAt, c.UsedRecordID
	}
	if c.DecisionRecordID != nil {
		a.DecisionRecordID = *c.DecisionRecordID
	}
}

// Rules is the ApprovalStore of every backend: the rules, written once,
// over the backend's Rows.
type Rules struct{ rows Rows }

// NewRules returns the ApprovalStore over rows.
func NewRules(rows Rows) Rules { return Rules{rows} }

var _ ApprovalStore = Rules{}

// kept is t as a store keeps it: UTC, to the microsecond.
func kept(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).UTC()
}

// timedOut is the change of an approval that expires at `at`.
func timedOut(at time.Time) *Change {
	return &Change{State: ApprovalExpired, DecidedReason: warden.CodeApprovalTimeout, DecidedAt: kept(at)}
}

// byID applies c (nil: nothing) to approval id if f selects it, and returns
// it as it is then; none is ErrApprovalNotFound.
func (r Rules) byID(ctx context.Context, id string, f Filter, c *Change) (*Approval, error) {
	var got []Approval
	var err error
	if f.ID = id; id != "" && c == nil { // (Filter{ID: ""} selects every row)
		got, err = r.rows.Select(ctx, f, NewestFirst, 1)
	} else if id != "" {
		got, err = r.rows.Update(ctx, f, *c)
	}
	if err == nil && len(got) == 0 {
		err = fmt.Errorf("%w: %q", ErrApprovalNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	return &got[0], nil
}

// CreateApproval implements ApprovalStore.
func (r Rules) CreateApproval(ctx context.Context, a *Approval) error {
	if a == nil || a.ID == "" {
		return errors.New("approval store: approval has no id")
	}
	if a.State != "" && a.State != ApprovalPending {
		return fmt.Errorf("approval store: new approval %q has state %q, want pending", a.ID, a.State)
	}
	c := *a
	c.State = ApprovalPending
	c.Created, c.Expires, c.DecidedAt, c.UsedAt = kept(a.Created), kept(a.Expires), kept(a.DecidedAt), kept(a.UsedAt)
	added, err := r.rows.Insert(ctx, &c)
	if err == nil && !added {
		err = fmt.Errorf("approval store: approval %q exists already", a.ID)
	}
	return err
}

// Approval implements ApprovalStore.
func (r Rules) Approval(ctx context.Context, id string) (*Approval, error) {
	return r.byID(ctx, id, Filter{}, nil)
}

// ListApprovals implements ApprovalStore: q.After need not match q's
// filters; an unknown one is audit.ErrUnknownCursor.
func (r Rules) ListApprovals(ctx context.Context, q ApprovalQuery) ([]Approval, error) {
	f := Filter{State: q.State, Tenant: q.Tenant, Session: q.Session}
	if q.After != "" {
		c, err := r.Approval(ctx, q.After)
		if errors.Is(err, ErrApprovalNotFound) {
			err = fmt.Errorf("approval store: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return nil, err
		}
		f.After = c
	}
	out, err := r.rows.Select(ctx, f, NewestFirst, q.EffectiveLimit())
	if out == nil && err == nil {
		out = []Approval{}
	}
	return out, err
}

// DecideApproval implements ApprovalStore: a compare-and-set on the
// approval being pending (and, to approve or deny, Expires not before at);
// one still pending after that is overdue, and a second one expires it.
func (r Rules) DecideApproval(ctx context.Context, id string, state ApprovalState, by, reason string, at time.Time) (*Approval, error) {
	if state != ApprovalApproved && state != ApprovalDenied && state != ApprovalExpired {
		return nil, fmt.Errorf("approval store: cannot decide approval %q to state %q", id, state)
	} else if at.IsZero() {
		return nil, fmt.Errorf("approval store: decide approval %q: no time", id)
	}
	f := Filter{State: ApprovalPending}
	if state != ApprovalExpired {
		f.ExpiresFrom = at
	}
	a, err := r.byID(ctx, id, f, &Change{State: state, DecidedBy: by, DecidedReason: reason, DecidedAt: kept(at)})
	if !errors.Is(err, ErrApprovalNotFound) {
		return a, err
	}
	if state != ApprovalExpired {
		a, err = r.byID(ctx, id, Filter{State: ApprovalPending, ExpiresBefore: at}, timedOut(at))
	}
	if errors.Is(err, ErrApprovalNotFound) {
		a, err = r.Approval(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return a, fmt.Errorf("%w: %q", ErrApprovalDecided, id)
}

// SetDecisionRecord implements ApprovalStore.
func (r Rules) SetDecisionRecord(ctx context.Context, id, recordID string) error {
	_, err := r.byID(ctx, id, Filter{}, &Change{DecisionRecordID: &recordID})
	return err
}

// UseApproval implements ApprovalStore: it picks the earliest decided
// candidate, then claims it with a compare-and-set on it being unused; of
// concurrent retries (on any replica) one claims it, and the others pick
// again: the next candidate, or none (each lost round used one up).
func (r Rules) UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*Approval, error) {
	if at.IsZero() {
		return nil, errors.New("approval store: use approval: no time")
	}
	if err := r.rows.Writable(); err != nil || key == "" {
		return nil, err
	}
	unused := Filter{Key: key, State: ApprovalApproved, Unused: true, DecidedFrom: notBefore}
	for {
		picked, err := r.rows.Select(ctx, unused, FirstDecided, 1)
		if err != nil || len(picked) == 0 {
			return nil, err
		}
		a, err := r.byID(ctx, picked[0].ID, unused, &Change{UsedAt: kept(at), UsedRecordID: recordID})
		if !errors.Is(err, ErrApprovalNotFound) {
			return a, err
		}
	}
}

// ExpireApprovals implements ApprovalStore. Replicas sweeping at once each
// get a share: a row one expired no longer matches for the other.
func (r Rules) ExpireApprovals(ctx context.Context, at time.Time) ([]Approval, error) {
	if at.IsZero() {
		return nil, errors.New("approval store: expire approvals: no time")
	}
	out, err := r.rows.Update(ctx, Filter{State: ApprovalPending, ExpiresBefore: at}, *timedOut(at))
	slices.SortFunc(out, func(a, b Approval) int { return NewestFirst.Compare(&b, &a) })
	return out, err
}
