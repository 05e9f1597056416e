package warden_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/handlertest"
)

// A hook that asked about the request, and was approved, does not ask
// again about its answer; one that was not approved still does.
func TestChainCoveredHook(t *testing.T) {
	ask := handlertest.Fixed(warden.Decision{Verdict: warden.Ask, Reason: "needs a human"})
	c := warden.NewChain(warden.Allow, warden.Step{Name: "secteam", Kind: "aos", Handler: ask})
	ev := &warden.Event{Name: "protocols/MCP", Direction: warden.Inbound, Payload: map[string]any{}}
	if out := c.Run(context.Background(), ev); out.Verdict != warden.Ask {
		t.Fatalf("not covered: %s, want ask", out.Verdict)
	}
	ev.Envelope.Approved = []warden.Cover{{Guardian: "secteam"}}
	out := c.Run(context.Background(), ev)
	if out.Verdict != warden.Allow || !slices.Contains(out.ReasonCodes, warden.CodeApprovalCovered) {
		t.Fatalf("covered: %s %v (%s), want allow with %s", out.Verdict, out.ReasonCodes, out.Reason, warden.CodeApprovalCovered)
	}
	if r := out.Results[0]; r.Decision != "allow" || r.Guardian != "secteam" {
		t.Fatalf("the hook's result: %+v", r)
	}
	ev.Envelope.Approved = []warden.Cover{{Guardian: "other"}}
	if out := c.Run(context.Background(), ev); out.Verdict != warden.Ask {
		t.Fatalf("another guardian's approval: %s, want ask", out.Verdict)
	}
}
