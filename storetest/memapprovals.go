package storetest

import (
	"context"
	"slices"

	"github.com/wardenhq/warden/approval"
)

// Mem is also an in-memory approval.ApprovalStore: approval.Rules over
// rows in a map, under one mutex. The approvals outlive Close (Reopen sees
// them); a closed Mem's methods fail.

// approvals is the approval.ApprovalStore a Mem embeds.
type approvals = approval.Rules

// memApprovals are a Mem's approval rows.
type memApprovals struct{ byID map[string]*approval.Approval }

// memApprovalRows are a Mem's approvals as approval.Rows, changed and
// read under lockData.
type memApprovalRows struct {
	m    *Mem
	byID map[string]*approval.Approval
}

func (r memApprovalRows) Writable() error {
	unlock, err := r.m.lockData(context.Background(), true)
	if err == nil {
		unlock()
	}
	return err
}

func (r memApprovalRows) Insert(ctx context.Context, a *approval.Approval) (bool, error) {
	unlock, err := r.m.lockData(ctx, true)
	if err != nil {
		return false, err
	}
	defer unlock()
	c, dup := *a, r.byID[a.ID] != nil
	if !dup {
		r.byID[a.ID] = &c
	}
	return !dup, nil
}

func (r memApprovalRows) Select(ctx context.Context, f approval.Filter, o approval.Order, limit int) ([]approval.Approval, error) {
	out, err := r.Update(ctx, f, approval.Change{})
	slices.SortFunc(out, func(a, b approval.Approval) int { return o.Compare(&a, &b) })
	return out[:min(len(out), limit)], err
}

func (r memApprovalRows) Update(ctx context.Context, f approval.Filter, c approval.Change) ([]approval.Approval, error) {
	unlock, err := r.m.lockData(ctx, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []approval.Approval
	for _, a := range r.byID {
		if f.Match(a) {
			c.Apply(a)
			out = append(out, *a)
		}
	}
	return out, nil
}
