package warden

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// Covers names every enforced ask of an approved outcome, and nothing of
// one that was not approved.
func TestOutcomeCovers(t *testing.T) {
	asked := Outcome{Verdict: Ask, ApprovalID: "a1", Results: []Result{
		{Guardian: "policy", PolicyID: "p1", Decision: "ask", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p2", Decision: "allow", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p3", Decision: "ask", Mode: "audit"},
		{Guardian: "policy", PolicyID: "p4", Decision: "deny", Mode: "enforce", Error: "boom"},
		{Guardian: "secteam", Decision: "ask", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p1", Decision: "ask", Mode: "enforce"},
		{Guardian: "acs", PolicyID: "p5", Decision: "defer", Mode: "enforce"},
		{Guardian: "rewrite", PolicyID: "p6", Decision: "ask", Mode: "enforce", Refused: "widens"},
	}}
	approved := Approved(asked, &Approval{ID: "a1", State: ApprovalApproved, DecidedBy: "ops"})
	want := []Cover{{"policy", "p1"}, {"secteam", ""}, {"acs", "p5"}}
	if got := approved.Covers(); !reflect.DeepEqual(got, want) {
		t.Fatalf("covers %+v, want %+v", got, want)
	}
	for name, o := range map[string]Outcome{
		"still asking":    asked,
		"refused":         asked.WithoutHold(),
		"allowed, no ask": {Verdict: Allow, Results: asked.Results},
		"granted code but no approval id": {Verdict: Allow, ReasonCodes: []string{CodeApprovalGranted},
			Results: asked.Results},
	} {
		if got := o.Covers(); got != nil {
			t.Errorf("%s: covers %+v, want none", name, got)
		}
	}
}

// A hook that asked about the request, and was approved, does not ask
// again about its answer; one that was not approved still does.
func TestChainCoveredHook(t *testing.T) {
	ask := fixed(Decision{Verdict: Ask, Reason: "needs a human"})
	c := NewChain(Allow, Step{Name: "secteam", Kind: "aos", Handler: ask})
	ev := &Event{Name: "protocols/MCP", Direction: Inbound, Payload: map[string]any{}}
	if out := c.Decide(context.Background(), ev); out.Verdict != Ask {
		t.Fatalf("not covered: %s, want ask", out.Verdict)
	}
	ev.Envelope.Approved = []Cover{{Guardian: "secteam"}}
	out := c.Decide(context.Background(), ev)
	if out.Verdict != Allow || !slices.Contains(out.ReasonCodes, CodeApprovalCovered) {
		t.Fatalf("covered: %s %v (%s), want allow with %s", out.Verdict, out.ReasonCodes, out.Reason, CodeApprovalCovered)
	}
	if r := out.Results[0]; r.Decision != "allow" || r.Guardian != "secteam" {
		t.Fatalf("the hook's result: %+v", r)
	}
	ev.Envelope.Approved = []Cover{{Guardian: "other"}}
	if out := c.Decide(context.Background(), ev); out.Verdict != Ask {
		t.Fatalf("another guardian's approval: %s, want ask", out.Verdict)
	}
}
