package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
)

// TestTenantPolicySets is issue 8's tenants against the whole binary: a
// token's tenant picks its policy set (the shared policies plus the
// tenant's) on every deciding surface, and a tenant's read token sees only
// its tenant's records.
func TestTenantPolicySets(t *testing.T) {
	bin := wardenBinary(t)
	up := &counter{body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`}
	upURL := up.serve(t)
	dir := t.TempDir()
	for _, d := range []string{"shared", "acme"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	deny := func(id, tool string) string {
		return fmt.Sprintf("id: %s\nversion: \"1\"\nevents: [steps/toolCallRequest, tool.pre_call, protocols/MCP]\nwhen: 'tool.name == %q'\ndecision: deny\nreason: no %s\n", id, tool, tool)
	}
	files := map[string]string{"shared/org.yaml": deny("org-no-rm", "rm"), "acme/acme.yaml": deny("acme-no-deploy", "deploy")}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	var entries strings.Builder
	for _, tk := range []struct{ name, scope, tenant string }{
		{"acme-agent", "decide", "acme"}, {"beta-agent", "decide", "beta"}, {"ops-agent", "decide", ""},
		{"acme-viewer", "read", "acme"}, {"beta-viewer", "read", "beta"},
	} {
		tok, sum, err := auth.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[tk.name] = tok
		fmt.Fprintf(&entries, "    - {name: %s, sha256: %s, scopes: [%s]", tk.name, sum, tk.scope)
		if tk.tenant != "" {
			fmt.Fprintf(&entries, ", tenant: %s", tk.tenant)
		}
		entries.WriteString("}\n")
	}
	cfg := filepath.Join(dir, "warden.yaml")
	conf := "policies: [./shared]\nauth:\n  tokens:\n" + entries.String() +
		"tenants:\n  acme: {policies: [./acme]}\n  beta: {defaultDecision: deny}\n" +
		fmt.Sprintf("mcp:\n  servers:\n    up: {url: %q}\n", upURL+"/mcp")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, "--config", cfg, "--data", filepath.Join(dir, "data"))

	aosCall := func(tool string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"x","toolId":"` + tool + `","inputs":[]},"context":{"session":{"id":"tenants"}}}}`
	}
	dispatchCall := func(tool string) string {
		return `{"event":"tool.pre_call","payload":{"session_id":"tenants","tool_name":"` + tool + `","tool_input":{}}}`
	}
	mcpCall := func(tool string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	}
	allowed := map[string]func(string) bool{
		"/aos":                func(b string) bool { return strings.Contains(b, `"decision":"allow"`) },
		"/api/hooks/dispatch": func(b string) bool { return strings.Contains(b, `"decision":"allow"`) },
		"/mcp/up":             func(b string) bool { return strings.Contains(b, `"text":"ok"`) },
	}
	bodies := map[string]func(string) string{"/aos": aosCall, "/api/hooks/dispatch": dispatchCall, "/mcp/up": mcpCall}
	forwarded := 0
	for _, c := range []struct {
		token, tool string
		allow       bool
	}{
		{"ops-agent", "deploy", true}, {"ops-agent", "rm", false},
		{"acme-agent", "deploy", false}, {"acme-agent", "rm", false}, {"acme-agent", "ls", true},
		{"beta-agent", "ls", false}, // beta denies what nothing decides
	} {
		for path, body := range bodies {
			code, b := send(t, "POST", srv.url+path, "application/json", "", tokens[c.token], body(c.tool))
			if code != 200 {
				t.Fatalf("%s %s %s: %d %s", c.token, path, c.tool, code, b)
			}
			if got := allowed[path](b); got != c.allow {
				t.Errorf("%s %s %s: allowed %v, want %v: %s", c.token, path, c.tool, got, c.allow, b)
			}
			if path == "/mcp/up" && c.allow {
				forwarded++
			}
		}
	}
	if n, _ := up.count(); n != forwarded {
		t.Errorf("the MCP upstream got %d calls, want the %d allowed", n, forwarded)
	}

	// Reads: each tenant's viewer sees its own records only.
	for viewer, tenant := range map[string]string{"acme-viewer": "acme", "beta-viewer": "beta"} {
		code, runs := send(t, "GET", srv.url+"/api/hooks/runs?last=500", "", "", tokens[viewer], "")
		if code != 200 {
			t.Fatalf("%s runs: %d %s", viewer, code, runs)
		}
		var recs []struct{ Tenant, Caller string }
		if err := json.Unmarshal([]byte(runs), &recs); err != nil {
			t.Fatal(err)
		}
		// acme: three steps on three surfaces, and the answer to the one MCP
		// call it let through; beta: three denied steps on three surfaces.
		if len(recs) != 10 && tenant == "acme" || len(recs) != 3 && tenant == "beta" {
			t.Errorf("%s sees %d records", viewer, len(recs))
		}
		for _, r := range recs {
			if r.Tenant != tenant || r.Caller != tenant+"-agent" {
				t.Errorf("%s sees a record of tenant %q caller %q", viewer, r.Tenant, r.Caller)
			}
		}
	}
}
