package guardian_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

// allowTool is a policy allowing tool.
func allowTool(id, tool string) string {
	return strings.Replace(denyTool(id, tool), "decision: deny", "decision: allow", 1)
}

// shadowOf returns the shadow results of r: the per-policy ones, and the
// summary.
func shadowOf(t *testing.T, r audit.Record) ([]warden.Result, warden.Result) {
	t.Helper()
	var per []warden.Result
	for _, res := range r.Results {
		if res.Mode == warden.ModeShadow && res.Kind != warden.KindShadowSet {
			if res.Guardian != warden.GuardianShadow {
				t.Errorf("shadow result of guardian %q", res.Guardian)
			}
			per = append(per, res)
		}
	}
	sum, ok := audit.ShadowSummary(r.Results)
	if !ok {
		t.Fatalf("record without a shadow summary: %+v", r.Results)
	}
	return per, sum
}

// liveResult is the live (enforce) result of policy id in r.
func liveResult(r audit.Record, id string) (warden.Result, bool) {
	for _, res := range r.Results {
		if res.PolicyID == id && res.Mode == "enforce" && res.Guardian == "policy" {
			return res, true
		}
	}
	return warden.Result{}, false
}

// The shadow set decides every step beside the live set and is never
// applied: a live deny with a shadow allow is answered deny and recorded
// with both, and a shadow deny with a live allow is answered allow (issue
// 11's acceptance).
func TestShadowRecordedNeverApplied(t *testing.T) {
	dir := t.TempDir()
	live := write(t, dir, "live.yaml", denyTool("no-deploy", "deploy"))
	breaks := "id: shadow-breaks\nversion: \"1\"\nevents: [\"steps/toolCallRequest\"]\n" +
		"when: 'tool.name == \"boom\" && int(tool.args.x) > 0'\ndecision: allow\n" // no x: an evaluation error
	cand := write(t, dir, "candidate.yaml", allowTool("deploys-ok", "deploy")+"---\n"+denyTool("no-rm", "rm")+"---\n"+breaks)
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{Policies: []string{live}, Shadow: []string{cand}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	tests := []struct {
		tool                     string
		want, shadow             warden.Verdict
		livePolicy, shadowPolicy string
	}{
		{"deploy", warden.Deny, warden.Allow, "no-deploy", "deploys-ok"}, // live deny, shadow allow
		{"rm", warden.Allow, warden.Deny, "", "no-rm"},                   // shadow deny, live allow
		{"ls", warden.Allow, warden.Allow, "", ""},                       // neither matches: both default
		{"boom", warden.Allow, warden.Deny, "", "shadow-breaks"},         // a shadow error fails the shadow set closed, not the step
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			st.Reset()
			out, err := gd.Decide(context.Background(), toolCall(tt.tool))
			if err != nil || out.Verdict != tt.want || out.PolicyID != tt.livePolicy {
				t.Fatalf("answer %s by %q (%v), want the live %s by %q", out.Verdict, out.PolicyID, err, tt.want, tt.livePolicy)
			}
			for _, r := range out.Results {
				if r.Mode == warden.ModeShadow {
					t.Fatalf("the answered outcome holds a shadow result: %+v", r)
				}
			}
			recs := st.Records()
			if len(recs) != 1 || recs[0].Decision != tt.want.String() {
				t.Fatalf("records %+v", recs)
			}
			r := recs[0]
			if tt.livePolicy != "" {
				if lr, ok := liveResult(r, tt.livePolicy); !ok || lr.Decision != tt.want.String() {
					t.Errorf("live result of %s: %+v, %v", tt.livePolicy, lr, ok)
				}
			}
			per, sum := shadowOf(t, r)
			if sum.Decision != tt.shadow.String() || sum.PolicyID != tt.shadowPolicy || sum.PolicyRevision != gd.ShadowPolicies("").Revision() {
				t.Errorf("shadow summary %+v, want %s by %q", sum, tt.shadow, tt.shadowPolicy)
			}
			if tt.shadowPolicy != "" && (len(per) != 1 || per[0].PolicyID != tt.shadowPolicy || per[0].Decision != tt.shadow.String()) {
				t.Errorf("shadow policy results %+v", per)
			}
			if wantErr := tt.tool == "boom"; len(per) > 0 && (per[0].Error != "") != wantErr {
				t.Errorf("shadow policy result error %q", per[0].Error)
			}
			if r.ShadowDisagrees() != (tt.want != tt.shadow) {
				t.Errorf("ShadowDisagrees = %v", r.ShadowDisagrees())
			}
		})
	}
}

// A shadow set is the pack and its own paths, in place of the live
// policies (so the live policy is not in it), and its default is the
// config's; a tenant's shadow set adds the tenant's policies.
func TestShadowSetIsACandidateSet(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"shared", "acme"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "shared/org.yaml", denyTool("org-no-rm", "rm"))
	write(t, dir, "acme/acme.yaml", denyTool("acme-no-deploy", "deploy"))
	cand := write(t, dir, "cand.yaml", denyTool("no-ls", "ls"))
	st := storetest.NewMem()
	cfg := write(t, dir, "warden.yaml", "policies: [./shared]\nshadow: [./cand.yaml]\n"+
		"tenants:\n  acme: {policies: [./acme]}\n  beta: {defaultDecision: deny}\n")
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	if s := gd.ShadowPolicies(""); s == nil || s.Get("no-ls") == nil || s.Get("org-no-rm") != nil || s.Get("deny-secrets-in-tool-calls") == nil {
		t.Fatalf("shared shadow set %v: want the pack and %s, not the live policies", s, cand)
	}
	if s := gd.ShadowPolicies("acme"); s == nil || s.Get("acme-no-deploy") == nil || s.Get("no-ls") == nil {
		t.Fatalf("acme's shadow set: want the tenant's policies too")
	}
	for _, c := range []struct{ tenant, tool, shadow string }{
		{"", "rm", "allow"}, {"", "ls", "deny"}, {"acme", "deploy", "deny"}, {"beta", "cat", "deny"},
	} {
		st.Reset()
		ctx := warden.WithPrincipal(context.Background(), warden.Principal{Name: "tok", Tenant: c.tenant})
		if _, err := gd.Decide(ctx, toolCall(c.tool)); err != nil {
			t.Fatal(err)
		}
		if _, sum := shadowOf(t, st.Records()[0]); sum.Decision != c.shadow {
			t.Errorf("tenant %q tool %s: shadow %s, want %s", c.tenant, c.tool, sum.Decision, c.shadow)
		}
	}
}

// A broken shadow set is a start-up error naming file:line, like a broken
// live set.
func TestShadowBrokenAtStart(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, body, want string }{
		{"bad yaml", "id: x\n  version: 1\n", "bad.yaml:2"},
		{"empty", "# nothing yet\n", "bad.yaml:1"},
		{"unknown event", strings.Replace(denyTool("x", "rm"), "steps/toolCallRequest", "tool.precall", 1), "bad.yaml:3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := write(t, dir, "bad.yaml", tt.body)
			_, err := guardian.Open(guardian.Options{Shadow: []string{bad}})
			if err == nil || !strings.Contains(err.Error(), "shadow set: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want a shadow set error at %s", err, tt.want)
			}
		})
	}
}

// A command hook's live deny counts in the shadow verdict (the hook is not
// run again for the shadow set).
func TestShadowFoldsLiveHooks(t *testing.T) {
	dir := t.TempDir()
	script := write(t, dir, "deny.sh", "#!/bin/sh\ncat >/dev/null\necho '{\"deny\": true, \"deny_reason\": \"hook says no\"}'\n")
	cfg := write(t, dir, "warden.yaml", "shadow: [./cand]\nhooks:\n  - name: gate\n    events: [steps/toolCallRequest]\n    command: ["+script+"]\n")
	if err := os.Mkdir(filepath.Join(dir, "cand"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "cand/c.yaml", allowTool("ok", "ls"))
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	out, err := gd.Decide(context.Background(), toolCall("ls"))
	if err != nil || out.Verdict != warden.Deny {
		t.Fatalf("live %v, %v", out.Verdict, err)
	}
	_, sum := shadowOf(t, st.Records()[0])
	if sum.Decision != "deny" || !strings.Contains(sum.Reason, "hook gate") || sum.PolicyID != "" {
		t.Fatalf("shadow summary %+v: want the hook's live deny", sum)
	}
}
