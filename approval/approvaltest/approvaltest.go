// Package approvaltest holds what tests of the surfaces that hold a call
// share about approvals: an approver that approves whatever is pending.
package approvaltest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
)

// Approver approves every approval of a Manager that is pending, as it
// appears, and keeps those it approved.
type Approver struct {
	mu   sync.Mutex
	seen []warden.Approval
}

// ApproveAll starts an Approver approving m's pending approvals as by,
// every few milliseconds, until ctx ends.
func ApproveAll(ctx context.Context, m *approval.Manager, by string) *Approver {
	a := &Approver{}
	go func() {
		for ctx.Err() == nil {
			list, _ := m.List(ctx, warden.ApprovalQuery{State: warden.ApprovalPending})
			for _, p := range list {
				if _, err := m.Decide(ctx, p.ID, true, warden.Principal{Name: by}, "approved by the test"); err == nil {
					a.mu.Lock()
					a.seen = append(a.seen, p)
					a.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return a
}

// Approved returns the approvals approved so far, as they were pending.
func (a *Approver) Approved() []warden.Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}
