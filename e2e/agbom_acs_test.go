package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/acsclient"
)

// TestACSInspect is ACS-Inspect and ACS-Inspect-Dynamic end to end: an
// independent ACS client negotiates agbom/snapshot and agbom/changed,
// sends a snapshot and then a change; both are allowed, signed and written
// into the session's audit chain; GET /api/agbom serves the agent's AgBOM
// as CycloneDX 1.6 and SPDX 3.0.1 with the change applied, and `warden
// agbom` prints the same from the data directory.
func TestACSInspect(t *testing.T) {
	dir := t.TempDir()
	srv := acsServer(t, dir)
	ctx := context.Background()
	c := acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "inspect-agent"})
	ch := c.ClientHello([]string{"steps/sessionStart", "agbom/snapshot", "agbom/changed", "steps/sessionEnd"})
	ch["profiles_supported"] = []string{"acs-core", "acs-inspect", "acs-inspect-dynamic"}
	hello, err := c.Call(ctx, "handshake/hello", ch)
	acsStep(t, c, hello, err, "allow", nil)
	if got, _ := json.Marshal(hello.Result["profiles_accepted"]); string(got) != `["acs-core","acs-inspect","acs-inspect-dynamic"]` {
		t.Fatalf("ServerHello profiles_accepted: %s", got)
	}
	if got, _ := json.Marshal(hello.Result["agbom_serializations_supported"]); string(got) != `["canonical","cyclonedx-1.6","spdx-3.0"]` {
		t.Fatalf("ServerHello agbom_serializations_supported: %s", got)
	}
	head := ""
	r, err := c.Call(ctx, "steps/sessionStart", map[string]any{"agent": map[string]any{"name": "inspect"}})
	acsStep(t, c, r, err, "allow", &head)
	snapshot := map[string]any{"agbom": map[string]any{"components": []any{
		map[string]any{"id": "gpt-4o", "type": "model", "name": "GPT-4o", "version": "2024-08-06", "provider": "OpenAI",
			"endpoint": "https://api.openai.com/v1", "model_fields": map[string]any{"context_window": 128000}},
		map[string]any{"id": "urn:tool:search", "type": "tool", "name": "search", "version": "1", "provider": "local",
			"tool_fields": map[string]any{"capability": "network.egress"}},
	}}}
	r, err = c.Call(ctx, "agbom/snapshot", snapshot)
	acsStep(t, c, r, err, "allow", &head)
	change := map[string]any{
		"added":   []any{map[string]any{"id": "urn:mcp:db", "type": "mcp_server", "name": "db", "version": "1.4.0", "endpoint": "https://mcp.internal/db", "mcp_server_fields": map[string]any{"tools": []any{}}}},
		"removed": []any{"urn:tool:search"},
	}
	r, err = c.Call(ctx, "agbom/changed", change)
	acsStep(t, c, r, err, "allow", &head)

	code, body := send(t, "GET", srv.url+"/api/agbom?agent=inspect-agent", "", "", "", "")
	if code != 200 || !strings.Contains(body, `"specVersion": "1.6"`) || !strings.Contains(body, `"bom-ref": "gpt-4o"`) ||
		!strings.Contains(body, `"bom-ref": "urn:mcp:db"`) || strings.Contains(body, "urn:tool:search") {
		t.Fatalf("GET /api/agbom (CycloneDX): %d %s", code, body)
	}
	code, body = send(t, "GET", srv.url+"/api/agbom?agent=inspect-agent&format=spdx", "", "", "", "")
	if code != 200 || !strings.Contains(body, `"type": "ai_AIPackage"`) {
		t.Fatalf("GET /api/agbom (SPDX): %d %s", code, body)
	}
	if code, body := send(t, "GET", srv.url+"/api/agbom?agent=nobody", "", "", "", ""); code != 404 {
		t.Errorf("unknown agent: %d %s", code, body)
	}
	// Both AgBOM steps are in the session's audit chain.
	code, body = send(t, "GET", srv.url+"/api/acs/sessions/"+c.SessionID(), "", "", "", "")
	if code != 200 {
		t.Fatalf("/api/acs/sessions: %d %s", code, body)
	}
	var sess struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &sess); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range sess.Entries {
		types = append(types, e["step_type"].(string))
		delete(e, "record_id") // warden's cross-reference, not part of the ContextEntry
	}
	if got := strings.Join(types, ","); got != "steps/sessionStart,agbom/snapshot,agbom/changed" {
		t.Fatalf("chain step types: %s", got)
	}
	if h, err := acsclient.VerifyChain(sess.Entries); err != nil || h != head {
		t.Fatalf("chain: head %s, %v; want %s", h, err, head)
	}
	out, err := exec.Command(wardenBinary(t), "agbom", "--data", filepath.Join(dir, "data"), "--agent", "inspect-agent", "--format", "acs").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"agent_id": "inspect-agent"`) || !strings.Contains(string(out), `"id": "urn:mcp:db"`) {
		t.Fatalf("warden agbom: %v\n%s", err, out)
	}
}
