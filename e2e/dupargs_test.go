package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hitRecorder is a server that must not be reached: it records each
// request and the credentials it carried, and answers as an MCP server or
// an A2A agent would (so a followed redirect looks like success).
type hitRecorder struct {
	mu   sync.Mutex
	hits []string
}

func (h *hitRecorder) serve(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits = append(h.hits, fmt.Sprintf("%s %s X-Api-Key=%q Authorization=%q", r.Method, r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization")))
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, ".json") {
			_, _ = io.WriteString(w, `{"name":"elsewhere","url":"http://elsewhere.example/","preferredTransport":"JSONRPC","skills":[]}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","role":"agent","messageId":"r","parts":[{"kind":"text","text":"from elsewhere"}],"content":[{"type":"text","text":"from elsewhere"}]}}`)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func (h *hitRecorder) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits...)
}

// dupPolicy denies mail outside company.io on the tool view's "to", on
// every event a tool call arrives as.
const dupPolicy = `id: no-external-email
version: "1"
events: ["steps/toolCallRequest", "tool.pre_call", "after_tool_call_success", "protocols/MCP"]
when: 'tool.name == "send_email" && !string(tool.args.to).endsWith("@company.io")'
decision: deny
reason: external email
`

// TestAttackDuplicateArgNamesServe: a tool call naming its "to" argument
// twice (evil first, company.io last) was allowed on /aos and hook
// dispatch, the view keeping the last value while the tool may use the
// first. Through the warden binary, every surface where arguments arrive
// as named values refuses it: /aos (AOS inputs, exact and case variants),
// /api/hooks/dispatch (an AOS step; AGH tool_input and Standard Agents
// function.arguments as JSON text), `warden eval` and `warden hooks
// dispatch`; /mcp/{server} (a duplicate key in arguments) refuses it
// before the server sees it.
func TestAttackDuplicateArgNamesServe(t *testing.T) {
	bin := wardenBinary(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "mail.yaml")
	if err := os.WriteFile(pol, []byte(dupPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpUp := &hitRecorder{}
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("defaultDecision: allow\nmcp:\n  servers:\n    mail: {url: %q}\n", mcpUp.serve(t)+"/mcp")), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, "--config", cfg, "--data", filepath.Join(dir, "data"), "--policy", pol)
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(srv.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	jsonText := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	const evil, ok = "evil@attacker.example", "ok@company.io"
	in := func(name, value string) string { return fmt.Sprintf(`{"name":%q,"value":%q}`, name, value) }
	step := func(inputs ...string) string {
		return `{"context":{},"toolCallRequest":{"executionId":"e1","toolId":"send_email","inputs":[` + strings.Join(inputs, ",") + `]}}`
	}
	aosReq := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":` + params + `}`
	}
	aghText := func(args string) string {
		return `{"session_id":"s","tool_name":"send_email","tool_input":` + jsonText(args) + `}`
	}
	stdText := func(args string) string {
		return `{"thread_id":"t","tool_call":{"id":"c1","type":"function","function":{"name":"send_email","arguments":` + jsonText(args) + `}},"result":"sent"}`
	}
	dispatch := func(event, payload string) string { return `{"event":"` + event + `","payload":` + payload + `}` }

	// The policy holds on one value.
	if _, body := post("/aos", aosReq(step(in("to", evil)))); !strings.Contains(body, `"decision":"deny"`) {
		t.Fatalf("/aos, one external to: %s", body)
	}
	if _, body := post("/aos", aosReq(step(in("to", ok)))); !strings.Contains(body, `"decision":"allow"`) {
		t.Fatalf("/aos, one internal to: %s", body)
	}

	t.Run("/aos", func(t *testing.T) {
		for _, c := range []struct {
			inputs []string
			want   string
		}{
			{[]string{in("to", evil), in("to", ok)}, `"message":"invalid params: params.toolCallRequest.inputs[1].name: duplicate input name \"to\" (also inputs[0])"`},
			{[]string{in("To", evil), in("to", ok)}, `"message":"invalid params: params.toolCallRequest.inputs[1].name: input names \"To\" (inputs[0]) and \"to\" differ only in case"`},
		} {
			_, body := post("/aos", aosReq(step(c.inputs...)))
			if !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, c.want) {
				t.Errorf("%v: %s, want -32602 with %s", c.inputs, body, c.want)
			}
		}
	})
	t.Run("/api/hooks/dispatch", func(t *testing.T) {
		for _, c := range []struct{ body, want string }{
			{dispatch("steps/toolCallRequest", step(in("to", evil), in("to", ok))), `duplicate input name \"to\" (also inputs[0])`},
			{dispatch("tool.pre_call", aghText(`{"to":"`+evil+`","to":"`+ok+`"}`)), `payload.tool_input: JSON text with duplicate key \"to\"`},
			{dispatch("after_tool_call_success", stdText(`{"to":"`+evil+`","TO":"`+ok+`"}`)), `payload.tool_call.function.arguments: JSON text with keys \"to\" and \"TO\" differ only in case`},
		} {
			code, body := post("/api/hooks/dispatch", c.body)
			if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Errorf("%s: %d %s, want 400 with %s", c.body, code, body, c.want)
			}
		}
	})
	t.Run("/mcp/{server}", func(t *testing.T) {
		_, body := post("/mcp/mail", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"`+evil+`","to":"`+ok+`"}}}`)
		if !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, `duplicate key \"to\" in params.arguments`) {
			t.Errorf("%s, want -32600 naming the duplicate key", body)
		}
		if hits := mcpUp.seen(); len(hits) > 0 {
			t.Errorf("the MCP server got %q", hits)
		}
	})
	t.Run("CLI", func(t *testing.T) {
		for _, c := range []struct {
			args  []string
			stdin string
			want  string
		}{
			{[]string{"eval", "--event", "aos"}, aosReq(step(in("to", evil), in("to", ok))), `duplicate input name "to" (also inputs[0])`},
			{[]string{"eval", "--event", "steps/toolCallRequest"}, step(in("to", evil), in("TO", ok)), `input names "to" (inputs[0]) and "TO" differ only in case`},
			{[]string{"hooks", "dispatch", "tool.pre_call"}, aghText(`{"to":"` + evil + `","to":"` + ok + `"}`), `payload.tool_input: JSON text with duplicate key "to"`},
		} {
			cmd := exec.Command(bin, append(c.args, "--policy", pol)...)
			cmd.Dir = t.TempDir() // its ./warden-data
			cmd.Stdin = strings.NewReader(c.stdin)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) {
				t.Errorf("warden %v: %v %s, want a failure with %s", c.args, err, out, c.want)
			}
		}
	})
}

// TestAttackUpstreamRedirectServe: an MCP server or A2A agent configured in
// warden that answers a redirect to another host had warden send the call
// there with the configured headers and relay the answer. Through the
// warden binary, the other host is never reached: the client gets the
// upstream-failure error.
func TestAttackUpstreamRedirectServe(t *testing.T) {
	bin := wardenBinary(t)
	elsewhere := &hitRecorder{}
	target := elsewhere.serve(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer up.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	conf := "defaultDecision: allow\n" +
		fmt.Sprintf("mcp:\n  servers:\n    up: {url: %q, headers: {X-Api-Key: mcp-api-key, Authorization: \"Bearer mcp-secret\"}}\n", up.URL+"/mcp") +
		fmt.Sprintf("a2a:\n  agents:\n    ag: {url: %q, headers: {X-Api-Key: a2a-api-key}}\n", up.URL+"/")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, "--config", cfg, "--data", filepath.Join(dir, "data"))
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/mcp/up", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, `answered HTTP 307, a redirect (not followed)`},
		{"GET", "/mcp/up", "", `answered HTTP 307, a redirect (not followed)`},
		{"POST", "/a2a/ag", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`, `upstream agent ag answered HTTP 307, a redirect (not followed)`},
		{"GET", "/a2a/ag/.well-known/agent-card.json", "", `upstream answered HTTP 307, a redirect (not followed)`},
	} {
		req, _ := http.NewRequest(c.method, srv.url+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), c.want) || strings.Contains(string(b), "elsewhere") {
			t.Errorf("%s %s: %d %s, want %s", c.method, c.path, resp.StatusCode, b, c.want)
		}
	}
	if hits := elsewhere.seen(); len(hits) > 0 {
		t.Fatalf("the redirect target was reached: %q", hits)
	}
	if out := srv.out.String(); !strings.Contains(out, "a redirect (not followed) to "+target) || strings.Contains(out, "mcp-secret") || strings.Contains(out, "api-key") {
		t.Errorf("warden's log names no redirect target, or a configured secret:\n%s", out)
	}
}
