package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Mem is also an in-memory approval.ApprovalStore with the semantics of the
// SQLite store (TestMemApprovals runs RunApprovals against it): times are
// kept in UTC to the microsecond, every state change is a compare-and-set
// under one mutex, and the approvals outlive Close (Reopen sees them), while
// the changing methods fail after Close.

var _ approval.ApprovalStore = (*Mem)(nil)

// memApprovals are a Mem's approvals, under memData.mu.
type memApprovals struct {
	byID map[string]*approval.Approval
}

// approvalsLocked returns m's approvals; the caller holds m.d.mu.
func (m *Mem) approvalsLocked() *memApprovals {
	if m.d.appr == nil {
		m.d.appr = &memApprovals{byID: map[string]*approval.Approval{}}
	}
	return m.d.appr
}

// usTime is t as a store keeps it: UTC, to the microsecond.
func usTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Microsecond).UTC()
}

// lockApprovals locks m's data for a change; it fails after Close.
func (m *Mem) lockApprovals() (*memApprovals, func(), error) {
	unlock, err := m.lockData(context.Background())
	if err != nil {
		return nil, nil, err
	}
	return m.approvalsLocked(), unlock, nil
}

// lockData takes m's locks for a change of its shared data (m.mu, then
// m.d.mu) and returns what releases them; it fails after Close or when
// ctx is done.
func (m *Mem) lockData(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("closed")
	}
	m.d.mu.Lock()
	return func() { m.d.mu.Unlock(); m.mu.Unlock() }, nil
}

// CreateApproval keeps a copy of a, pending (a.State must be pending or
// empty; a.ID must be new).
func (m *Mem) CreateApproval(ctx context.Context, a *approval.Approval) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if a == nil || a.ID == "" {
		return errors.New("storetest: approval has no id")
	}
	if a.State != "" && a.State != approval.ApprovalPending {
		return fmt.Errorf("storetest: new approval %q has state %q, want pending", a.ID, a.State)
	}
	ap, unlock, err := m.lockApprovals()
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := ap.byID[a.ID]; ok {
		return fmt.Errorf("storetest: approval %q exists already", a.ID)
	}
	c := *a
	c.State = approval.ApprovalPending
	c.Created, c.Expires = usTime(a.Created), usTime(a.Expires)
	c.DecidedAt, c.UsedAt = usTime(a.DecidedAt), usTime(a.UsedAt)
	ap.byID[c.ID] = &c
	return nil
}

// Approval returns a copy of the approval with id.
func (m *Mem) Approval(ctx context.Context, id string) (*approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	a, ok := m.approvalsLocked().byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	c := *a
	return &c, nil
}

// newerFirst orders approvals newest Created first, then by id descending.
func newerFirst(a, b *approval.Approval) int {
	return cmp.Or(b.Created.Compare(a.Created), strings.Compare(b.ID, a.ID))
}

// ListApprovals returns copies of the approvals q selects, newest first (by
// Created, then id); q.EffectiveLimit() of them.
func (m *Mem) ListApprovals(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := q.EffectiveLimit()
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	ap := m.approvalsLocked()
	var cursor *approval.Approval
	if q.After != "" {
		c, ok := ap.byID[q.After]
		if !ok {
			return nil, fmt.Errorf("storetest: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		cursor = c
	}
	all := make([]*approval.Approval, 0, len(ap.byID))
	for _, a := range ap.byID {
		all = append(all, a)
	}
	slices.SortFunc(all, newerFirst)
	out := []approval.Approval{}
	for _, a := range all {
		if len(out) == limit {
			break
		}
		if cursor != nil && newerFirst(a, cursor) <= 0 {
			continue
		}
		if (q.State == "" || a.State == q.State) && (q.Tenant == "" || a.Tenant == q.Tenant) &&
			(q.Session == "" || a.SessionID == q.Session) {
			out = append(out, *a)
		}
	}
	return out, nil
}

// DecideApproval decides a pending approval; see the SQLite store for the
// exact semantics, which it shares (an approve or deny after Expires
// expires the approval and fails with approval.ErrApprovalDecided).
func (m *Mem) DecideApproval(ctx context.Context, id string, state approval.ApprovalState, by, reason string, at time.Time) (*approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch state {
	case approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired:
	default:
		return nil, fmt.Errorf("storetest: cannot decide approval %q to state %q", id, state)
	}
	if at.IsZero() {
		return nil, fmt.Errorf("storetest: decide approval %q: no time", id)
	}
	ap, unlock, err := m.lockApprovals()
	if err != nil {
		return nil, err
	}
	defer unlock()
	a, ok := ap.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	if a.State != approval.ApprovalPending {
		c := *a
		return &c, fmt.Errorf("%w: %q", approval.ErrApprovalDecided, id)
	}
	if state != approval.ApprovalExpired && a.Expires.Before(at) {
		expire(a, at)
		c := *a
		return &c, fmt.Errorf("%w: %q", approval.ErrApprovalDecided, id)
	}
	a.State, a.DecidedBy, a.DecidedReason, a.DecidedAt = state, by, reason, usTime(at)
	c := *a
	return &c, nil
}

// expire moves a to expired at `at`, as ExpireApprovals does.
func expire(a *approval.Approval, at time.Time) {
	a.State, a.DecidedBy, a.DecidedReason, a.DecidedAt = approval.ApprovalExpired, "", warden.CodeApprovalTimeout, usTime(at)
}

// SetDecisionRecord sets the approval's DecisionRecordID.
func (m *Mem) SetDecisionRecord(ctx context.Context, id, recordID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ap, unlock, err := m.lockApprovals()
	if err != nil {
		return err
	}
	defer unlock()
	a, ok := ap.byID[id]
	if !ok {
		return fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	a.DecisionRecordID = recordID
	return nil
}

// UseApproval marks used the earliest decided approved, unused approval
// with key decided at or after notBefore, and returns a copy; none (or an
// empty key) is (nil, nil).
func (m *Mem) UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if at.IsZero() {
		return nil, errors.New("storetest: use approval: no time")
	}
	ap, unlock, err := m.lockApprovals()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if key == "" {
		return nil, nil
	}
	var best *approval.Approval
	for _, a := range ap.byID {
		if a.Key != key || a.State != approval.ApprovalApproved || !a.UsedAt.IsZero() || a.DecidedAt.Before(notBefore) {
			continue
		}
		if best == nil || cmp.Or(a.DecidedAt.Compare(best.DecidedAt), strings.Compare(a.ID, best.ID)) < 0 {
			best = a
		}
	}
	if best == nil {
		return nil, nil
	}
	best.UsedAt, best.UsedRecordID = usTime(at), recordID
	c := *best
	return &c, nil
}

// ExpireApprovals expires every pending approval whose Expires is before at
// and returns copies, oldest Created first (then by id).
func (m *Mem) ExpireApprovals(ctx context.Context, at time.Time) ([]approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if at.IsZero() {
		return nil, errors.New("storetest: expire approvals: no time")
	}
	ap, unlock, err := m.lockApprovals()
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := []approval.Approval{}
	for _, a := range ap.byID {
		if a.State == approval.ApprovalPending && a.Expires.Before(at) {
			expire(a, at)
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(a, b approval.Approval) int { return newerFirst(&b, &a) })
	return out, nil
}
