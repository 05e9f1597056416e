package warden

import (
	"context"
	"slices"
	"testing"
)

// A hook that asked about the request, and was approved, does not ask
// again about its answer; one that was not approved still does.
func TestChainCoveredHook(t *testing.T) {
	ask := fixed(Decision{Verdict: Ask, Reason: "needs a human"})
	c := NewChain(Allow, Step{Name: "secteam", Kind: "aos", Handler: ask})
	ev := &Event{Name: "protocols/MCP", Direction: Inbound, Payload: map[string]any{}}
	if out := c.Run(context.Background(), ev); out.Verdict != Ask {
		t.Fatalf("not covered: %s, want ask", out.Verdict)
	}
	ev.Envelope.Approved = []Cover{{Guardian: "secteam"}}
	out := c.Run(context.Background(), ev)
	if out.Verdict != Allow || !slices.Contains(out.ReasonCodes, CodeApprovalCovered) {
		t.Fatalf("covered: %s %v (%s), want allow with %s", out.Verdict, out.ReasonCodes, out.Reason, CodeApprovalCovered)
	}
	if r := out.Results[0]; r.Decision != "allow" || r.Guardian != "secteam" {
		t.Fatalf("the hook's result: %+v", r)
	}
	ev.Envelope.Approved = []Cover{{Guardian: "other"}}
	if out := c.Run(context.Background(), ev); out.Verdict != Ask {
		t.Fatalf("another guardian's approval: %s, want ask", out.Verdict)
	}
}
