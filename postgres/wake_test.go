package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
)

// TestFleetWake: replica A holds an MCP call that asked; replica B's
// approval manager approves it; A releases the call (allowed) well within a
// second, woken by B's notification rather than by its own once-a-second
// sweep. Repeated, so that a sweep that happened to fall right after the
// decision cannot pass for the notification.
func TestFleetWake(t *testing.T) {
	a, b := fleet(t)
	ma := approval.New(approval.Options{Store: a, Trace: a})
	t.Cleanup(ma.Close)
	mb := approval.New(approval.Options{Store: b, Trace: b})
	t.Cleanup(mb.Close)
	ask := warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Ask, Reason: "needs a human", PolicyID: "ask"}, nil
	})
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: ask}), Views: catalog.Views, Store: a, Approvals: ma})
	ctx := context.Background()
	const trials = 5
	var took []time.Duration
	for i := range trials {
		ev := &warden.Event{Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Outbound,
			Payload: map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
				"params": map[string]any{"name": "deploy", "arguments": map[string]any{"n": i}}},
			Envelope: warden.Envelope{SessionID: "s1", Server: "ops"}}
		out, err := dec.Decide(ctx, ev)
		if err != nil || out.ApprovalID == "" {
			t.Fatalf("Decide: %v, %+v: want an asked step with an approval", err, out)
		}
		released := make(chan warden.Outcome, 1)
		go func() { released <- ma.Await(ctx, out) }()
		time.Sleep(150 * time.Millisecond) // A is holding
		select {
		case got := <-released:
			t.Fatalf("released before the decision: %+v", got)
		default:
		}
		start := time.Now()
		if _, err := mb.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "alice"}, "ok"); err != nil {
			t.Fatalf("replica B decides: %v", err)
		}
		select {
		case got := <-released:
			took = append(took, time.Since(start))
			if got.Verdict != warden.Allow {
				t.Fatalf("released with %v (%s), want allow", got.Verdict, got.Reason)
			}
		case <-time.After(time.Second):
			t.Fatalf("trial %d: the call held on replica A was not released within 1 s of replica B's decision", i)
		}
	}
	slices.Sort(took)
	t.Logf("released after B's decision in %v (median %v, max %v)", took, took[len(took)/2], took[len(took)-1])
	if took[len(took)-1] > 500*time.Millisecond {
		t.Errorf("slowest release %v: the notification should release a held call in well under 500 ms", took[len(took)-1])
	}
}

// TestFleetStream: replica A's approval stream carries what replica B
// creates and decides.
func TestFleetStream(t *testing.T) {
	a, b := fleet(t)
	ma := approval.New(approval.Options{Store: a, Trace: a})
	t.Cleanup(ma.Close)
	ch, cancel, ok := ma.Subscribe()
	if !ok {
		t.Fatal("Subscribe refused")
	}
	defer cancel()
	time.Sleep(300 * time.Millisecond) // the listener connects
	ctx := context.Background()
	now := time.Now().UTC()
	if err := b.CreateApproval(ctx, &approval.Approval{ID: "ap-b", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DecideApproval(ctx, "ap-b", approval.ApprovalDenied, "bob", "no", now); err != nil {
		t.Fatal(err)
	}
	var states []approval.ApprovalState
	deadline := time.After(2 * time.Second)
	for len(states) < 2 {
		select {
		case x := <-ch:
			if x.ID == "ap-b" {
				states = append(states, x.State)
			}
		case <-deadline:
			t.Fatalf("replica A's stream carried %v of replica B's approval, want it created and decided", states)
		}
	}
	if states[len(states)-1] != approval.ApprovalDenied {
		t.Fatalf("stream states %v, want the last one denied", states)
	}
}

// TestFleetAOSRetry: an AOS step asked on replica A is answered at once
// (ask, with its approval); approved through replica B; the agent's retry,
// landing on B, is let through; a second retry, on A, asks again: the
// retry grant is used once fleet-wide.
func TestFleetAOSRetry(t *testing.T) {
	a, b := fleet(t)
	ask := warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Ask, Reason: "needs a human", PolicyID: "ask"}, nil
	})
	var decs [2]*pipeline.Pipeline
	var ms [2]*approval.Manager
	for i, st := range []*Store{a, b} {
		ms[i] = approval.New(approval.Options{Store: st, Trace: st})
		t.Cleanup(ms[i].Close)
		decs[i] = pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: ask}), Views: catalog.Views, Store: st, Approvals: ms[i]})
	}
	step := func() *warden.Event {
		return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: map[string]any{
			"toolCallRequest": map[string]any{"executionId": "x1", "toolId": "send_email",
				"inputs": []any{map[string]any{"name": "to", "value": "bob@example.com"}}},
			"context": map[string]any{"session": map[string]any{"id": "s1"}}}}
	}
	ctx := context.Background()
	out, err := decs[0].Decide(ctx, step())
	if err != nil || out.Verdict != warden.Ask || out.ApprovalID == "" {
		t.Fatalf("first try on A: %v %+v, want ask with an approval", err, out)
	}
	if again, _ := decs[1].Decide(ctx, step()); again.Verdict != warden.Ask || again.ApprovalID != out.ApprovalID {
		t.Fatalf("retry on B before anyone decided: %v %s, want ask naming the same approval %s", again.Verdict, again.ApprovalID, out.ApprovalID)
	}
	if _, err := ms[1].Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "alice"}, "ok"); err != nil {
		t.Fatal(err)
	}
	if ok, err := decs[1].Decide(ctx, step()); err != nil || ok.Verdict != warden.Allow {
		t.Fatalf("retry on B after approval: %v %v, want allow", err, ok.Verdict)
	}
	if twice, _ := decs[0].Decide(ctx, step()); twice.Verdict != warden.Ask || twice.ApprovalID == out.ApprovalID {
		t.Fatalf("second retry on A: %v %s, want a new ask (the grant is used)", twice.Verdict, twice.ApprovalID)
	}
}
