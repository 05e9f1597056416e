// Package approvaltest holds what tests of the surfaces that hold a call
// share about approvals: a Guardian with approvals over an in-memory trace,
// and an approver that approves whatever is pending.
package approvaltest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// Approver approves every approval of a Manager that is pending, as it
// appears, and keeps those it approved.
type Approver struct {
	mu   sync.Mutex
	seen []approval.Approval
}

// ApproveAll starts an Approver approving m's pending approvals as by,
// every few milliseconds, until ctx ends.
func ApproveAll(ctx context.Context, m *approval.Manager, by string) *Approver {
	a := &Approver{}
	go func() {
		for ctx.Err() == nil {
			list, _ := m.List(ctx, approval.ApprovalQuery{State: approval.ApprovalPending})
			for _, p := range list {
				// Locked across the decision: the call it releases may be
				// answered before the append, and a test reading Approved
				// then must see it.
				a.mu.Lock()
				if _, err := m.Resolve(ctx, p.ID, true, warden.Principal{Name: by}, "approved by the test"); err == nil {
					a.seen = append(a.seen, p)
				}
				a.mu.Unlock()
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
func (a *Approver) Approved() []approval.Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// Core is a Guardian with approvals, as `warden serve` builds one: a
// Decider that opens an approval for every ask, and a Manager that holds
// the asked call until it is decided.
type Core struct {
	*pipeline.Pipeline
	M *approval.Manager
}

// Await holds an asked step until its approval is decided (approval.Holder).
func (c Core) Await(ctx context.Context, out warden.Outcome) warden.Outcome {
	return c.M.Await(ctx, out)
}

// NewCore returns a Core deciding with the policies of the YAML text src
// (a file of policy documents) over an in-memory trace, and the trace.
// Everything it starts ends with the test.
func NewCore(t testing.TB, src string) (Core, *storetest.Mem) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st, Wait: time.Minute})
	t.Cleanup(m.Close)
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow,
		warden.Step{Name: "policy", Kind: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views, Store: st, Approvals: m})
	return Core{dec, m}, st
}
