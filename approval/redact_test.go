package approval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
)

// An approval is stored redacted (Options.Redact): its tool name, and the
// reason its approver gives.
func TestApprovalRedacted(t *testing.T) {
	const secret = "AKIAIOSFODNN7EXAMPLE"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED:aws_access_key:0]") }
	f := newFixture(t, approval.Options{Redact: redact})
	ctx := context.Background()
	ev := step(warden.SurfaceAOS, "a@example.com")
	ev.Payload["toolCallRequest"].(map[string]any)["toolId"] = secret
	out, _ := f.dec.Decide(ctx, ev)
	if out.ApprovalID == "" {
		t.Fatalf("no approval: %+v", out)
	}
	a, err := f.m.Resolve(ctx, out.ApprovalID, false, warden.Principal{Name: "ops"}, "use "+secret+" instead")
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.m.List(ctx, approval.ApprovalQuery{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	for _, got := range []*approval.Approval{a, &list[0]} {
		if got.DecidedReason != "use [REDACTED:aws_access_key:0] instead" || got.Tool != "[REDACTED:aws_access_key:0]" {
			t.Errorf("approval: tool %q, reason %q", got.Tool, got.DecidedReason)
		}
	}
}
