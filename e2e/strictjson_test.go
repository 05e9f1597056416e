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

// strictServer runs warden with every JSON body surface on: /aos, /acs,
// /mcp/up and /a2a/ag (to counting upstreams), dispatch, the approvals API
// (askPolicy) and the console's sign-in (auth tokens). It returns the
// server, the tokens by name and the upstreams.
func strictServer(t *testing.T) (*server, map[string]string, *counter, *counter) {
	t.Helper()
	mcpUp := &counter{body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`}
	a2aUp := &counter{body: `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","role":"agent","messageId":"r1","parts":[{"kind":"text","text":"ok"}]}}`}
	mcpURL, a2aURL := mcpUp.serve(t), a2aUp.serve(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte(askPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	var entries strings.Builder
	for _, tk := range []struct{ name, scope string }{{"agent", "decide"}, {"approver", "approve"}, {"viewer", "read"}} {
		tok, sum, err := auth.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[tk.name] = tok
		fmt.Fprintf(&entries, "    - {name: %s, sha256: %s, scopes: [%s]}\n", tk.name, sum, tk.scope)
	}
	conf := "policies: [./ask.yaml]\nauth:\n  tokens:\n" + entries.String() +
		fmt.Sprintf("acs:\n  keys:\n    k1: %q\n", "hex:"+fmt.Sprintf("%x", acsTestKey)) +
		fmt.Sprintf("mcp:\n  servers:\n    up: {url: %q}\n", mcpURL+"/mcp") +
		fmt.Sprintf("a2a:\n  agents:\n    ag: {url: %q}\n", a2aURL+"/")
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data")), tokens, mcpUp, a2aUp
}

// strictCase is one body sent to one JSON body surface, and what the
// refusal must say.
type strictCase struct {
	name, path, token, body string
	status                  int    // the HTTP status of the refusal
	says                    string // text the refusal holds
}

// runStrict sends each case and checks that it is refused, that nothing
// reached an upstream, that no record was added to the trace and that the
// pending approval is still pending.
func runStrict(t *testing.T, srv *server, tokens map[string]string, mcpUp, a2aUp *counter, approvalID string, cases []strictCase) {
	t.Helper()
	runs := func() int {
		code, b := send(t, "GET", srv.url+"/api/hooks/runs?last=1000", "", "", tokens["viewer"], "")
		var recs []json.RawMessage
		if code != 200 || json.Unmarshal([]byte(b), &recs) != nil {
			t.Fatalf("runs: %d %s", code, b)
		}
		return len(recs)
	}
	before := runs()
	for _, c := range cases {
		origin := ""
		if c.path == "/api/session" {
			origin = srv.url
		}
		code, b := send(t, "POST", srv.url+c.path, "application/json", origin, c.token, c.body)
		if code != c.status || !strings.Contains(b, c.says) {
			t.Errorf("%s: POST %s: %d %s, want %d saying %q", c.name, c.path, code, b, c.status, c.says)
		}
		if strings.Contains(b, `"result"`) || strings.Contains(b, `"decision":"allow"`) {
			t.Errorf("%s: POST %s was answered, not refused: %s", c.name, c.path, b)
		}
	}
	if n, _ := mcpUp.count(); n != 0 {
		t.Errorf("the MCP upstream got %d calls", n)
	}
	if n, _ := a2aUp.count(); n != 0 {
		t.Errorf("the A2A upstream got %d calls", n)
	}
	if after := runs(); after != before {
		t.Errorf("%d records added to the trace by refused bodies", after-before)
	}
	code, b := send(t, "GET", srv.url+"/api/approvals/"+approvalID, "", "", tokens["viewer"], "")
	if code != 200 || !strings.Contains(b, `"state":"pending"`) {
		t.Errorf("the approval: %d %s, want still pending", code, b)
	}
}

// pendingApproval asks about send_email once through /aos: the id of the
// approval it created.
func pendingApproval(t *testing.T, srv *server, token string) string {
	t.Helper()
	code, b := send(t, "POST", srv.url+"/aos", "application/json", "", token, aosEmail("bob@example.com", 1))
	var a aosAnswer
	if code != 200 || json.Unmarshal([]byte(b), &a) != nil || a.Result.Data.ApprovalID == "" {
		t.Fatalf("asking: %d %s", code, b)
	}
	return a.Result.Data.ApprovalID
}

// TestAttackCaseVariantKeysEverywhere sends, to every surface that reads
// a JSON body, one whose keys differ only in case (encoding/json matches
// struct fields case-insensitively and keeps the last; other readers keep
// the first, or the exact one): {"decision":"deny","Decision":"approve"}
// approved an approval, {"token":"x","Token":"…"} signed in. Every one is
// refused, nothing is decided, forwarded, recorded or approved.
func TestAttackCaseVariantKeysEverywhere(t *testing.T) {
	srv, tokens, mcpUp, a2aUp := strictServer(t)
	id := pendingApproval(t, srv, tokens["agent"])
	agent := tokens["agent"]
	const inCase = "differ only in case"
	runStrict(t, srv, tokens, mcpUp, a2aUp, id, []strictCase{
		{"approvals API: the decision", "/api/approvals/" + id, tokens["approver"], `{"decision":"deny","Decision":"approve"}`, 400, inCase},
		{"approvals API: the decision, other order", "/api/approvals/" + id, tokens["approver"], `{"Decision":"approve","decision":"deny"}`, 400, inCase},
		{"approvals API: a field in another case only", "/api/approvals/" + id, tokens["approver"], `{"DECISION":"approve"}`, 400, "spelled exactly"},
		{"console sign-in: the token", "/api/session", "", `{"token":"wdn_nope","Token":"` + tokens["viewer"] + `"}`, 400, inCase},
		{"/aos: an input's value", "/aos", agent, `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e","toolId":"send_email","inputs":[{"name":"to","value":"bob@example.com","Value":"eve@evil.example"}]},"context":{"session":{"id":"s"}}}}`, 200, inCase},
		{"/aos: the method", "/aos", agent, `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"steps/toolCallRequest"}`, 200, inCase},
		{"/acs: the method", "/acs", agent, `{"jsonrpc":"2.0","id":1,"method":"handshake","Method":"steps/toolCallRequest","params":{}}`, 200, inCase},
		{"/mcp: the tool name", "/mcp/up", agent, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"send_email","arguments":{}}}`, 200, inCase},
		{"/a2a: the role", "/a2a/ag", agent, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","Role":"agent","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`, 200, inCase},
		{"dispatch: the event", "/api/hooks/dispatch", agent, `{"event":"tool.pre_call","Event":"session.start","payload":{"session_id":"s","tool_name":"send_email","tool_input":{}}}`, 400, inCase},
		{"dispatch: the event in another case only", "/api/hooks/dispatch", agent, `{"Event":"tool.pre_call","payload":{"session_id":"s","tool_name":"send_email","tool_input":{}}}`, 400, "spelled exactly"},
		{"dispatch: the tool name", "/api/hooks/dispatch", agent, `{"event":"tool.pre_call","payload":{"session_id":"s","tool_name":"send_email","Tool_Name":"ls","tool_input":{}}}`, 400, inCase},
	})
}

// TestAttackInvalidUTF8EverySurface sends invalid UTF-8 and lone surrogate
// escapes to every surface that reads a JSON body (/aos, /acs, /mcp,
// /a2a, dispatch, the approvals API, the sign-in): each refuses it, as
// docs/security.md says, nothing is decided on the U+FFFD encoding/json
// would read.
func TestAttackInvalidUTF8EverySurface(t *testing.T) {
	srv, tokens, mcpUp, a2aUp := strictServer(t)
	id := pendingApproval(t, srv, tokens["agent"])
	agent := tokens["agent"]
	aos := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e","toolId":"send_email","inputs":[{"name":"to","value":"` + v + `"}]},"context":{"session":{"id":"s"}}}}`
	}
	var cases []strictCase
	for _, bad := range []struct{ name, text, says string }{
		{"invalid UTF-8", "eve\xff@evil.example", "UTF-8"},
		{"a lone surrogate", `eve\ud800@evil.example`, "surrogate"},
	} {
		cases = append(cases,
			strictCase{"/aos: " + bad.name, "/aos", agent, aos(bad.text), 200, bad.says},
			strictCase{"/acs: " + bad.name, "/acs", agent, `{"jsonrpc":"2.0","id":1,"method":"handshake","params":{"x":"` + bad.text + `"}}`, 200, bad.says},
			strictCase{"/mcp: " + bad.name, "/mcp/up", agent, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"` + bad.text + `"}}}`, 200, bad.says},
			strictCase{"/a2a: " + bad.name, "/a2a/ag", agent, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"` + bad.text + `"}]}}}`, 200, bad.says},
			strictCase{"dispatch: " + bad.name, "/api/hooks/dispatch", agent, `{"event":"tool.pre_call","payload":{"session_id":"s","tool_name":"send_email","tool_input":{"to":"` + bad.text + `"}}}`, 400, bad.says},
			strictCase{"approvals API: " + bad.name, "/api/approvals/" + id, tokens["approver"], `{"decision":"approve","reason":"` + bad.text + `"}`, 400, bad.says},
			strictCase{"console sign-in: " + bad.name, "/api/session", "", `{"token":"` + bad.text + `"}`, 400, bad.says},
		)
	}
	runStrict(t, srv, tokens, mcpUp, a2aUp, id, cases)
}
