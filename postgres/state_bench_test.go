package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/approval"
)

// BenchmarkACSStep: one ACS step's two writes (RememberRequest, then
// AppendACSEntry on the session's head), by parallel goroutines each with a
// session of its own, spread over two Stores (two replicas) on one
// database.
func BenchmarkACSStep(b *testing.B) {
	u := testSchemaURL(b)
	stores := []*Store{openTest(b, u, Options{}), openTest(b, u, Options{})}
	ctx := context.Background()
	var n atomic.Int64
	at := time.Now().UTC()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := n.Add(1)
		s := stores[g%2]
		session := fmt.Sprintf("bench-%d", g)
		if err := s.PutACSSession(ctx, &acsstate.Session{ID: session, Version: "1.0", Hello: at}); err != nil {
			b.Error(err)
			return
		}
		head := ""
		for i := 0; pb.Next(); i++ {
			req := fmt.Sprintf("req-%d", i)
			if err := s.RememberRequest(ctx, session, req, at, 5*time.Minute); err != nil {
				b.Error(err)
				return
			}
			h := fmt.Sprintf("%s-%d", session, i)
			if err := s.AppendACSEntry(ctx, session, head, &acsstate.Entry{EntryID: h, StepID: req,
				StepType: "steps/toolCallRequest", Timestamp: at, PreviousHash: head, EntryHash: h, Decision: "allow"}); err != nil {
				b.Error(err)
				return
			}
			head = h
		}
	})
}

// BenchmarkDecideApproval: create an approval and decide it (with its
// notification), from parallel goroutines over two Stores.
func BenchmarkDecideApproval(b *testing.B) {
	u := testSchemaURL(b)
	stores := []*Store{openTest(b, u, Options{}), openTest(b, u, Options{})}
	ctx := context.Background()
	var n atomic.Int64
	now := time.Now().UTC()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := n.Add(1)
		s := stores[g%2]
		for i := 0; pb.Next(); i++ {
			id := fmt.Sprintf("ap-%d-%d", g, i)
			if err := s.CreateApproval(ctx, &approval.Approval{ID: id, Created: now, Expires: now.Add(time.Hour)}); err != nil {
				b.Error(err)
				return
			}
			if _, err := s.DecideApproval(ctx, id, approval.ApprovalApproved, "alice", "", now); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
