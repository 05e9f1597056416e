package guardian_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

func denyTool(id, tool string) string {
	return "id: " + id + "\nversion: \"1\"\nevents: [\"steps/toolCallRequest\"]\nwhen: 'tool.name == \"" + tool + "\"'\ndecision: deny\nreason: no " + tool + "\n"
}

// tenantGuardian opens a Guardian whose shared set denies rm, whose tenant
// acme adds a policy denying deploy, and whose tenant beta adds nothing but
// denies by default.
func tenantGuardian(t *testing.T, st audit.Store) (*guardian.Guardian, string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"shared", "acme"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "shared/org.yaml", denyTool("org-no-rm", "rm"))
	write(t, dir, "acme/acme.yaml", denyTool("acme-no-deploy", "deploy"))
	cfg := write(t, dir, "warden.yaml", "policies: [./shared]\n"+
		"tenants:\n  acme: {policies: [./acme]}\n  beta: {defaultDecision: deny}\n")
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gd.Close(context.Background()) })
	return gd, dir
}

func toolCall(tool string) *warden.Event {
	return &warden.Event{Name: "steps/toolCallRequest", Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "e1", "toolId": tool, "inputs": []any{}},
		"context":         map[string]any{"session": map[string]any{"id": "s1"}},
	}}
}

// A caller's tenant picks its policy set: the shared set plus the tenant's
// policies, with the tenant's default decision (issue 8: tenants).
func TestTenantPicksItsPolicySet(t *testing.T) {
	st := storetest.NewMem()
	gd, _ := tenantGuardian(t, st)
	for _, c := range []struct {
		tenant, tool string
		want         warden.Verdict
		policy       string
	}{
		{"", "deploy", warden.Allow, ""},
		{"", "rm", warden.Deny, "org-no-rm"},
		{"acme", "deploy", warden.Deny, "acme-no-deploy"},
		{"acme", "rm", warden.Deny, "org-no-rm"}, // a tenant cannot leave the shared policies out
		{"acme", "ls", warden.Allow, ""},
		{"beta", "deploy", warden.Deny, ""}, // nothing decides: beta's default
		{"beta", "rm", warden.Deny, "org-no-rm"},
	} {
		ctx := warden.WithPrincipal(context.Background(), warden.Principal{Name: "tok", Tenant: c.tenant})
		out, err := gd.Decide(ctx, toolCall(c.tool))
		if err != nil {
			t.Fatalf("%s/%s: %v", c.tenant, c.tool, err)
		}
		if out.Verdict != c.want || out.PolicyID != c.policy {
			t.Errorf("tenant %q tool %s: %s by %q, want %s by %q", c.tenant, c.tool, out.Verdict, out.PolicyID, c.want, c.policy)
		}
	}
	revs := map[string]string{}
	for _, r := range st.Records() {
		if prev, ok := revs[r.Tenant]; ok && prev != r.PolicyRevision {
			t.Errorf("tenant %q: two revisions %s and %s", r.Tenant, prev, r.PolicyRevision)
		}
		revs[r.Tenant] = r.PolicyRevision
	}
	if len(revs) != 3 || revs[""] == revs["acme"] || revs["acme"] == revs["beta"] {
		t.Errorf("each set is recorded with its own revision: %v", revs)
	}
	if gd.TenantPolicies("acme").Len() != gd.Policies().Len()+1 {
		t.Errorf("acme has %d policies, the shared set %d", gd.TenantPolicies("acme").Len(), gd.Policies().Len())
	}
}

// The Go API's event principal picks the set too; a tenant the config does
// not declare is refused rather than decided by the shared set alone.
func TestTenantUnknownRefused(t *testing.T) {
	gd, _ := tenantGuardian(t, nil)
	ev := toolCall("deploy")
	ev.Principal = warden.Principal{Tenant: "acme"}
	if out, err := gd.Decide(context.Background(), ev); err != nil || out.Verdict != warden.Deny {
		t.Fatalf("event principal acme: %v %v", out.Verdict, err)
	}
	ev = toolCall("deploy")
	ev.Principal = warden.Principal{Tenant: "acmee"}
	if _, err := gd.Decide(context.Background(), ev); !errors.Is(err, guardian.ErrUnknownTenant) {
		t.Fatalf("undeclared tenant: err %v, want ErrUnknownTenant", err)
	}
}

// Reload recompiles each tenant's set; a broken tenant file keeps that
// tenant's set in force and is reported, the others reload.
func TestTenantReload(t *testing.T) {
	gd, dir := tenantGuardian(t, nil)
	acme := warden.WithPrincipal(context.Background(), warden.Principal{Tenant: "acme"})
	write(t, dir, "acme/acme.yaml", denyTool("acme-no-ls", "ls"))
	if err := gd.Reload(nil); err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]warden.Verdict{"ls": warden.Deny, "deploy": warden.Allow} {
		if out, _ := gd.Decide(acme, toolCall(tool)); out.Verdict != want {
			t.Errorf("after reload, acme %s: %s want %s", tool, out.Verdict, want)
		}
	}
	write(t, dir, "acme/acme.yaml", "id: [broken\n")
	err := gd.Reload(nil)
	if err == nil || !strings.Contains(err.Error(), "tenant acme") {
		t.Fatalf("broken tenant file: err %v", err)
	}
	if out, _ := gd.Decide(acme, toolCall("ls")); out.Verdict != warden.Deny {
		t.Errorf("the set in force stays: acme ls %s", out.Verdict)
	}
}

// Tenant configuration errors name the file, line and tenant.
func TestTenantConfigErrors(t *testing.T) {
	for name, c := range map[string]struct{ cfg, want string }{
		"undeclared token tenant": {"auth:\n  tokens:\n    - {name: a, sha256: " + strings.Repeat("ab", 32) + ", scopes: [decide], tenant: acmee}\ntenants:\n  acme: {}\n",
			`tenant "acmee" is not declared`},
		"bad default":  {"tenants:\n  acme: {defaultDecision: ask}\n", "tenants.acme.defaultDecision: expected allow or deny"},
		"unknown key":  {"tenants:\n  acme: {policy: [x]}\n", `tenants.acme: unknown key "policy"`},
		"bad name":     {"tenants:\n  a/b: {}\n", "tenants.a/b: a name may hold"},
		"missing path": {"tenants:\n  acme: {policies: [./nope]}\n", "tenant acme"},
		"duplicate id": {"policies: [./shared.yaml]\ntenants:\n  acme: {policies: [./dup.yaml]}\n", "tenant acme"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "shared.yaml", denyTool("same", "rm"))
			write(t, dir, "dup.yaml", denyTool("same", "ls"))
			cfg := write(t, dir, "warden.yaml", c.cfg)
			_, err := guardian.Open(guardian.Options{ConfigFile: cfg})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}
