package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// feedStore is an in-memory store with a change feed the test drives, as
// another replica's changes would.
type feedStore struct {
	*storetest.Mem
	ids  chan string
	subs chan struct{} // one value per ApprovalChanges call
}

func (f *feedStore) ApprovalChanges(ctx context.Context) (<-chan string, error) {
	out := make(chan string)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-f.ids:
				select {
				case out <- id:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	f.subs <- struct{}{}
	return out, nil
}

// A call held here is released as soon as the feed names its approval,
// decided elsewhere (in the store, not through this Manager), not at the
// next sweep; the streams are told of it; "" re-reads every held call.
func TestChangeFeedWakes(t *testing.T) {
	st := &feedStore{Mem: storetest.NewMem(), ids: make(chan string), subs: make(chan struct{}, 4)}
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	select {
	case <-st.subs:
	case <-time.After(time.Second):
		t.Fatal("the Manager did not subscribe to the store's change feed")
	}
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: asker(false)}), Views: catalog.Views, Store: st, Approvals: m})
	ctx := context.Background()
	stream, cancel, ok := m.Subscribe()
	if !ok {
		t.Fatal("Subscribe refused")
	}
	defer cancel()
	for i, marker := range []bool{false, true} {
		out, err := dec.Decide(ctx, step(warden.SurfaceMCP, "bob@example.com"))
		if err != nil || out.ApprovalID == "" {
			t.Fatalf("Decide: %v %+v", err, out)
		}
		released := make(chan warden.Outcome, 1)
		go func() { released <- m.Await(ctx, out) }()
		time.Sleep(50 * time.Millisecond)
		// Another replica decides: the store changes, this Manager is not told.
		if _, err := st.DecideApproval(ctx, out.ApprovalID, approval.ApprovalApproved, "alice", "", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if marker {
			st.ids <- "" // missed changes: re-read every held call
		} else {
			st.ids <- out.ApprovalID
		}
		select {
		case got := <-released:
			if got.Verdict != warden.Allow {
				t.Fatalf("trial %d: released with %v", i, got.Verdict)
			}
			if d := time.Since(start); d > 300*time.Millisecond {
				t.Fatalf("trial %d: released %v after the feed named it: that is the sweep, not the feed", i, d)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("trial %d: not released", i)
		}
		if !marker {
			deadline := time.After(time.Second)
			for seen := false; !seen; {
				select {
				case a := <-stream:
					seen = a.ID == out.ApprovalID && a.State == approval.ApprovalApproved
				case <-deadline:
					t.Fatal("the stream was not told of the approval decided elsewhere")
				}
			}
		}
	}
}
