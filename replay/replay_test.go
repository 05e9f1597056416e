package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/storetest"
)

// unitPolicies is the candidate set of the record table (no pack).
const unitPolicies = `id: ask-email
version: "1"
events: ["steps/toolCallRequest"]
when: 'tool.name == "send_email"'
decision: ask
reason: email needs approval
---
id: no-db
version: "1"
events: ["protocols/MCP"]
when: 'tool.server == "db"'
decision: deny
reason: no database
`

const (
	emailInput = `{"toolCallRequest":{"executionId":"e","toolId":"send_email","inputs":[]},"context":{}}`
	emailViews = `{"tool":{"name":"send_email","id":"send_email","server":"","args":{}}}`
	mcpInput   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{}}}`
)

func policyResult(id, decision string) warden.Result {
	return warden.Result{Guardian: "policy", PolicyID: id, PolicyVersion: "1", Decision: decision, Mode: "enforce"}
}

var noPolicy = warden.Result{Guardian: "policy", Kind: "policy", Mode: "enforce"}

// TestDecideRecords replays hand-made records, one feature each.
func TestDecideRecords(t *testing.T) {
	tests := []struct {
		name       string
		rec        audit.Record
		want       string // the replayed decision
		wantPolicy string
	}{
		{"policy decided again", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "allow",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{noPolicy}},
			"ask", "ask-email"},
		{"shadow results are not steps", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "allow",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{noPolicy,
				{Guardian: "shadow", PolicyID: "x", Decision: "deny", Mode: "shadow"},
				{Guardian: "shadow", Kind: "shadow_set", Decision: "deny", Mode: "shadow"}}},
			"ask", "ask-email"},
		{"an approved retry stays approved", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "allow",
			ReasonCodes: []string{warden.CodeApprovalGranted, "ask-email"}, ApprovalID: "a1",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{policyResult("ask-email", "ask")}},
			"allow", "ask-email"},
		{"an approval that could not open stays a deny", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "deny",
			ReasonCodes: []string{warden.CodeApprovalUnavailable}, Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews),
			Results: []warden.Result{policyResult("ask-email", "ask")}},
			"deny", "ask-email"},
		{"recorded views, not the input's", audit.Record{Event: "protocols/MCP", Surface: "mcp", Direction: "outbound", Decision: "allow",
			Input: json.RawMessage(mcpInput), Views: json.RawMessage(`{"tool":{"name":"query","server":"db","args":{}}}`),
			Results: []warden.Result{noPolicy}},
			"deny", "no-db"},
		{"no views: built from the input", audit.Record{Event: "protocols/MCP", Surface: "mcp", Direction: "outbound", Decision: "allow",
			Input: json.RawMessage(mcpInput), Results: []warden.Result{noPolicy}},
			"allow", ""},
		{"a remote guardian's deny stands", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "deny",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{noPolicy,
				{Guardian: "secteam", Kind: "aos", Decision: "deny", Mode: "enforce", Reason: "remote says no", PolicyID: "r1"}}},
			"deny", "r1"},
		{"a hook that failed open is skipped", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "deny",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{
				{Guardian: "h", Kind: "webhook", Decision: "allow", Mode: "enforce", Error: "timed out after 1s"}}},
			"allow", ""},
		{"a hook that failed closed denies", audit.Record{Event: "steps/toolCallRequest", Surface: "aos", Decision: "allow",
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: []warden.Result{
				{Guardian: "h", Kind: "command", Decision: "deny", Mode: "enforce", Error: "exit status 1"}}},
			"deny", ""},
		{"a webhook's recorded patch", audit.Record{Event: "tool.pre_call", Surface: "hooks", Decision: "allow",
			Input: json.RawMessage(`{"tool_name":"x","tool_input":{}}`), Views: json.RawMessage(`{"tool":{"name":"x"}}`), Results: []warden.Result{
				noPolicy, {Guardian: "h", Kind: "webhook", Decision: "modify", Mode: "enforce", Patch: json.RawMessage(`{"tool_input":{"a":1}}`)}}},
			"modify", ""},
		{"a patch the guard refuses", audit.Record{Event: "tool.pre_call", Surface: "hooks", Decision: "allow",
			Input: json.RawMessage(`{"tool_name":"x","tool_input":{}}`), Views: json.RawMessage(`{"tool":{"name":"x"}}`), Results: []warden.Result{
				noPolicy, {Guardian: "h", Kind: "webhook", Decision: "modify", Mode: "enforce", Patch: json.RawMessage(`{"session_id":"other"}`)}}},
			"allow", ""},
	}
	r, err := replay.Open(guardian.Options{Policies: []string{policyDir(t, unitPolicies)}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rec.ID = "r1"
			out, err := r.Replay(context.Background(), &tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict.String() != tt.want || out.PolicyID != tt.wantPolicy {
				t.Errorf("%s by %q, want %s by %q (%s; %+v)", out.Verdict, out.PolicyID, tt.want, tt.wantPolicy, out.Reason, out.Results)
			}
		})
	}
}

// TestRunSkipsApprovalsAndFailsOnBadRecords: an approval's own record is
// counted, not decided; a record whose input is not an object fails the
// run with its id.
func TestRunSkipsApprovalsAndFailsOnBadRecords(t *testing.T) {
	r, err := replay.Open(guardian.Options{Policies: []string{policyDir(t, unitPolicies)}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	add := func(id, surface, input string) {
		t.Helper()
		rec := &audit.Record{ID: id, Event: "steps/toolCallRequest", Surface: surface, Decision: "allow",
			Input: json.RawMessage(input), Views: json.RawMessage(emailViews), Results: []warden.Result{noPolicy}}
		if err := st.Record(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "aos", emailInput)
	add("b", warden.SurfaceApproval, `{"approval":"x"}`)
	add("c", "aos", emailInput)
	rep, err := r.Run(context.Background(), st, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Replayed != 2 || s.SkippedApprovals != 1 || s.Changed != 2 || len(rep.Changed) != 2 ||
		rep.Changed[0].ID != "a" || rep.Changed[1].ID != "c" || rep.Changed[0].New.Decision != "ask" {
		t.Fatalf("%+v %+v", s, rep.Changed)
	}
	if len(s.Policies) != 1 || s.Policies[0] != (replay.PolicyDelta{Policy: "ask-email", NewlyMatched: 2}) {
		t.Errorf("policies %+v", s.Policies)
	}
	add("d", "aos", `["not", "an", "object"]`)
	if _, err := r.Run(context.Background(), st, audit.Query{}); err == nil || !strings.Contains(err.Error(), "record d") {
		t.Fatalf("want an error naming record d, got %v", err)
	}
}

// TestTenantRecords: a record of a declared tenant is decided by that
// tenant's set and default decision, the others by the shared ones.
func TestTenantRecords(t *testing.T) {
	dir := policyDir(t, unitPolicies)
	cfg := filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(cfg, []byte("tenants:\n  acme: {defaultDecision: deny}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := replay.Open(guardian.Options{ConfigFile: cfg, Policies: []string{dir}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tenant, want string }{{"", "allow"}, {"acme", "deny"}, {"other", "allow"}} {
		rec := &audit.Record{ID: "r", Event: "protocols/MCP", Surface: "mcp", Direction: "outbound", Tenant: tt.tenant,
			Input: json.RawMessage(mcpInput), Views: json.RawMessage(`{"tool":{"name":"query","server":"files"}}`),
			Results: []warden.Result{noPolicy}}
		out, err := r.Replay(context.Background(), rec)
		if err != nil || out.Verdict.String() != tt.want {
			t.Errorf("tenant %q: %s, %v; want %s", tt.tenant, out.Verdict, err, tt.want)
		}
	}
}

// TestRunShowsShadowDisagreements: replay counts the records recorded
// beside a shadow set and where the shadow verdict differed from live,
// per live → shadow decision (issue 11: replay shows where live and
// shadow disagree).
func TestRunShowsShadowDisagreements(t *testing.T) {
	r, err := replay.Open(guardian.Options{Policies: []string{policyDir(t, unitPolicies)}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	shadow := func(decision string) []warden.Result {
		return []warden.Result{noPolicy, {Guardian: "shadow", Kind: warden.KindShadowSet, Decision: decision, Mode: warden.ModeShadow}}
	}
	for i, c := range []struct {
		live    string
		results []warden.Result
	}{
		{"deny", shadow("allow")}, {"deny", shadow("allow")}, {"allow", shadow("allow")},
		{"allow", shadow("deny")}, {"allow", []warden.Result{noPolicy}},
	} {
		rec := &audit.Record{ID: string(rune('a' + i)), Event: "steps/toolCallRequest", Surface: "aos", Decision: c.live,
			Input: json.RawMessage(emailInput), Views: json.RawMessage(emailViews), Results: c.results}
		if err := st.Record(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := r.Run(context.Background(), st, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Summary.Shadow
	want := replay.ShadowDelta{Records: 4, Disagree: 3, Transitions: []replay.Transition{
		{From: "allow", To: "deny", Records: 1}, {From: "deny", To: "allow", Records: 2}}}
	if got.Records != want.Records || got.Disagree != want.Disagree || len(got.Transitions) != 2 ||
		got.Transitions[0] != want.Transitions[0] || got.Transitions[1] != want.Transitions[1] {
		t.Fatalf("shadow %+v, want %+v", got, want)
	}
}
