package approval_test

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
)

// Covers names every enforced ask of an approved outcome, and nothing of
// one that was not approved.
func TestOutcomeCovers(t *testing.T) {
	asked := warden.Outcome{Verdict: warden.Ask, ApprovalID: "a1", Results: []warden.Result{
		{Guardian: "policy", PolicyID: "p1", Decision: "ask", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p2", Decision: "allow", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p3", Decision: "ask", Mode: "audit"},
		{Guardian: "policy", PolicyID: "p4", Decision: "deny", Mode: "enforce", Error: "boom"},
		{Guardian: "secteam", Decision: "ask", Mode: "enforce"},
		{Guardian: "policy", PolicyID: "p1", Decision: "ask", Mode: "enforce"},
		{Guardian: "acs", PolicyID: "p5", Decision: "defer", Mode: "enforce"},
		{Guardian: "rewrite", PolicyID: "p6", Decision: "ask", Mode: "enforce", Refused: "widens"},
	}}
	approved := approval.Approved(asked, &approval.Approval{ID: "a1", State: approval.ApprovalApproved, DecidedBy: "ops"})
	want := []warden.Cover{{Guardian: "policy", PolicyID: "p1"}, {Guardian: "secteam"}, {Guardian: "acs", PolicyID: "p5"}}
	if got := approved.Covers(); !reflect.DeepEqual(got, want) {
		t.Fatalf("covers %+v, want %+v", got, want)
	}
	for name, o := range map[string]warden.Outcome{
		"still asking":    asked,
		"refused":         asked.WithoutHold(),
		"allowed, no ask": {Verdict: warden.Allow, Results: asked.Results},
		"granted code but no approval id": {Verdict: warden.Allow, ReasonCodes: []string{warden.CodeApprovalGranted},
			Results: asked.Results},
	} {
		if got := o.Covers(); got != nil {
			t.Errorf("%s: covers %+v, want none", name, got)
		}
	}
}
