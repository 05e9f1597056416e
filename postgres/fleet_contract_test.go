package postgres

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden/storetest"
)

// replicas is the shared state of two Stores on one schema, as a
// round-robin balancer shows it to its clients: each call goes to the next
// replica. The storetest contracts run on it unchanged, so every method's
// contract holds when consecutive calls (and the contracts' concurrent
// ones) land on different replicas.
type replicas struct {
	s [2]*Store
	n atomic.Uint64
}

func (r *replicas) next() *Store { return r.s[r.n.Add(1)%2] }

func openReplicas(t *testing.T, url string) *replicas {
	return &replicas{s: [2]*Store{openTest(t, url, Options{}), openTest(t, url, Options{})}}
}

func (r *replicas) CreateApproval(ctx context.Context, a *approval.Approval) error {
	return r.next().CreateApproval(ctx, a)
}
func (r *replicas) Approval(ctx context.Context, id string) (*approval.Approval, error) {
	return r.next().Approval(ctx, id)
}
func (r *replicas) ListApprovals(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error) {
	return r.next().ListApprovals(ctx, q)
}
func (r *replicas) DecideApproval(ctx context.Context, id string, state approval.ApprovalState, by, reason string, at time.Time) (*approval.Approval, error) {
	return r.next().DecideApproval(ctx, id, state, by, reason, at)
}
func (r *replicas) SetDecisionRecord(ctx context.Context, id, recordID string) error {
	return r.next().SetDecisionRecord(ctx, id, recordID)
}
func (r *replicas) UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*approval.Approval, error) {
	return r.next().UseApproval(ctx, key, notBefore, at, recordID)
}
func (r *replicas) ExpireApprovals(ctx context.Context, at time.Time) ([]approval.Approval, error) {
	return r.next().ExpireApprovals(ctx, at)
}
func (r *replicas) PutACSSession(ctx context.Context, x *acsstate.Session) error {
	return r.next().PutACSSession(ctx, x)
}
func (r *replicas) ACSSession(ctx context.Context, id string) (*acsstate.Session, error) {
	return r.next().ACSSession(ctx, id)
}
func (r *replicas) RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error {
	return r.next().RememberRequest(ctx, session, key, at, window)
}
func (r *replicas) AppendACSEntry(ctx context.Context, session, prev string, e *acsstate.Entry) error {
	return r.next().AppendACSEntry(ctx, session, prev, e)
}
func (r *replicas) ACSEntries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	return r.next().ACSEntries(ctx, session, after, limit)
}
func (r *replicas) EndACSSession(ctx context.Context, id string, at time.Time) error {
	return r.next().EndACSSession(ctx, id, at)
}
func (r *replicas) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	return r.next().SessionLabels(ctx, tenant, session)
}
func (r *replicas) AddSessionLabels(ctx context.Context, tenant, session string, labels []string, at time.Time) ([]string, error) {
	return r.next().AddSessionLabels(ctx, tenant, session, labels, at)
}
func (r *replicas) UpdateAgBOM(ctx context.Context, u *agbom.Update) error {
	return r.next().UpdateAgBOM(ctx, u)
}
func (r *replicas) AgBOM(ctx context.Context, tenant, agent string) ([]agbom.StoredComponent, error) {
	return r.next().AgBOM(ctx, tenant, agent)
}
func (r *replicas) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]agbom.Agent, error) {
	return r.next().AgBOMAgents(ctx, tenant, all, limit)
}
func (r *replicas) ToolPins(ctx context.Context, server string) ([]agbom.ToolPin, error) {
	return r.next().ToolPins(ctx, server)
}
func (r *replicas) PinTools(ctx context.Context, server string, put []agbom.ToolPin, remove []string) error {
	return r.next().PinTools(ctx, server, put, remove)
}

var (
	_ approval.ApprovalStore = (*replicas)(nil)
	_ acsstate.Store         = (*replicas)(nil)
	_ labels.Store           = (*replicas)(nil)
	_ agbom.Store            = (*replicas)(nil)
)

// TestFleetContracts runs the shared-state contracts on two replicas,
// calls alternating between them.
func TestFleetContracts(t *testing.T) {
	testBaseURL(t)
	t.Run("Approvals", func(t *testing.T) {
		storetest.RunApprovals(t, func(t *testing.T) approval.ApprovalStore { return openReplicas(t, testSchemaURL(t)) })
	})
	t.Run("ACS", func(t *testing.T) {
		storetest.RunACS(t, func(t *testing.T) acsstate.Store { return openReplicas(t, testSchemaURL(t)) })
	})
	t.Run("AgBOM", func(t *testing.T) {
		storetest.RunAgBOM(t, func(t *testing.T) agbom.Store { return openReplicas(t, testSchemaURL(t)) })
	})
	t.Run("Labels", func(t *testing.T) {
		urls := map[labels.Store]string{}
		storetest.RunLabels(t, func(t *testing.T) labels.Store {
			u := testSchemaURL(t)
			r := openReplicas(t, u)
			urls[r] = u
			return r
		}, func(t *testing.T, s labels.Store) labels.Store {
			for _, st := range s.(*replicas).s {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			return openReplicas(t, urls[s])
		})
	})
}
