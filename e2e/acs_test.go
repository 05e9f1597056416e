package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/acsclient"
)

var acsTestKey = []byte("e2e-acs-key-material-0123456789")

// acsServer starts warden with the ACS test policies (acs/testdata), no
// built-in pack, signatures required, the data in data.
func acsServer(t *testing.T, dir string) *server {
	t.Helper()
	pol, err := filepath.Abs("../acs/testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("policies: [%q]\nacs:\n  keys:\n    k1: %q\n", pol, "hex:"+fmt.Sprintf("%x", acsTestKey))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"), "--builtin=false")
}

// acsStep checks an answer: no error, the decision, a signature that
// verifies independently, and a chain_hash that moved on from *head.
func acsStep(t *testing.T, c *acsclient.Client, r *acsclient.Response, err error, decision string, head *string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		t.Fatalf("%s: error %d %s", r.Request.Method, r.Error.Code, r.Error.Message)
	}
	if got := r.Decision(); got != decision {
		t.Fatalf("%s: decision %q (%s), want %q", r.Request.Method, got, r.Reasoning(), decision)
	}
	if err := c.VerifyResponse(r); err != nil {
		t.Fatalf("%s: the answer does not verify: %v\n%s", r.Request.Method, err, r.Raw)
	}
	if head != nil {
		h := r.ChainHash()
		if !acsclient.IsHash(h) || h == *head {
			t.Fatalf("%s: chain_hash %q did not advance from %q", r.Request.Method, h, *head)
		}
		*head = h
	}
}

// TestACSLifecycleAcrossRestart is issue 10's client acceptance: an
// independent Go ACS client signs every request and checks every answer's
// signature through handshake → sessionStart → userMessage →
// toolCallRequest (allow, deny, modify, ask → approve → allowed) →
// toolCallResult → agentResponse; warden restarts; the session continues
// (its chain verifies from the first entry to the head published last), a
// replayed request_id, a stale timestamp and a wrong signature are refused
// right after the restart, and sessionEnd closes the session.
func TestACSLifecycleAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	srv := acsServer(t, dir)
	ctx := context.Background()
	c := acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "e2e-agent"})
	methods := []string{"steps/sessionStart", "steps/userMessage", "steps/toolCallRequest", "steps/toolCallResult",
		"steps/agentResponse", "steps/sessionEnd", "system/ping"}
	hello, err := c.Handshake(ctx, methods)
	acsStep(t, c, hello, err, "allow", nil)
	if hello.Result["negotiated_version"] != "0.1.0" || hello.Result["on_decision_failure"] != "deny" {
		t.Fatalf("ServerHello: %s", hello.Raw)
	}
	head := ""
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "value": s}}}
	}
	tool := func(name string, args map[string]any) map[string]any {
		w := map[string]any{}
		for k, v := range args {
			w[k] = map[string]any{"value": v}
		}
		return map[string]any{"tool": map[string]any{"name": name}, "arguments": w}
	}
	r, err := c.Call(ctx, "steps/sessionStart", map[string]any{"agent": map[string]any{"name": "e2e"}})
	acsStep(t, c, r, err, "allow", &head)
	r, err = c.Call(ctx, "steps/userMessage", text("list my files"))
	acsStep(t, c, r, err, "allow", &head)
	lsReq := c.Request("steps/toolCallRequest", tool("ls", map[string]any{"dir": "."}))
	r, err = c.Send(ctx, lsReq)
	acsStep(t, c, r, err, "allow", &head)
	r, err = c.Call(ctx, "steps/toolCallRequest", tool("Bash", map[string]any{"command": "rm -rf /"}))
	acsStep(t, c, r, err, "deny", &head)
	if !slices.Contains(r.ReasonCodes(), "acs-test-deny-rm") || r.Reasoning() != "destructive shell command" {
		t.Errorf("deny: %s", r.Raw)
	}
	r, err = c.Call(ctx, "steps/toolCallRequest", tool("search", map[string]any{"q": "x", "limit": 500}))
	acsStep(t, c, r, err, "modify", &head)
	mods, _ := r.Result["modifications"].(map[string]any)
	if ov, _ := mods["parameter_overrides"].(map[string]any); ov == nil || fmt.Sprint(ov["limit"]) != "100" {
		t.Errorf("modify: want parameter_overrides {limit: 100}: %s", r.Raw)
	}
	email := tool("send_email", map[string]any{"to": "cfo@example.com", "body": "numbers"})
	r, err = c.Call(ctx, "steps/toolCallRequest", email)
	acsStep(t, c, r, err, "ask", &head)
	ask, _ := r.Result["ask_details"].(map[string]any)
	approval, _ := ask["approval_id"].(string)
	if approval == "" {
		t.Fatalf("ask without an approval: %s", r.Raw)
	}
	code, body := send(t, "POST", srv.url+"/api/approvals/"+approval, "application/json", "", "", `{"decision":"approve","reason":"fine"}`)
	if code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, body)
	}
	r, err = c.Call(ctx, "steps/toolCallRequest", email) // the identical step, a new request_id
	acsStep(t, c, r, err, "allow", &head)
	if !slices.Contains(r.ReasonCodes(), "approval_granted") {
		t.Errorf("the approved retry: %s", r.Raw)
	}
	r, err = c.Call(ctx, "steps/toolCallResult", map[string]any{"tool": map[string]any{"name": "send_email"},
		"exit_status": "success", "outputs": []any{map[string]any{"value": "sent"}}})
	acsStep(t, c, r, err, "allow", &head)
	r, err = c.Call(ctx, "steps/agentResponse", text("The email is sent."))
	acsStep(t, c, r, err, "allow", &head)

	// Restart warden on the same data.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.wait(t, 30*time.Second); err != nil {
		t.Fatalf("warden serve: %v\n%s", err, srv.out)
	}
	srv = acsServer(t, dir)
	c2 := acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "e2e-agent", SessionID: c.SessionID()})

	replayed, err := c2.Send(ctx, lsReq)
	if err != nil || replayed.ErrorCode() != -32005 {
		t.Fatalf("a replayed request_id after the restart: %v %s, want -32005", err, replayed.Raw)
	}
	stale, err := c2.Call(ctx, "steps/toolCallRequest", tool("ls", nil), acsclient.WithTimestamp(time.Now().Add(-time.Hour)))
	if err != nil || stale.ErrorCode() != -32006 {
		t.Fatalf("a stale timestamp after the restart: %v %s, want -32006", err, stale.Raw)
	}
	forged, err := c2.Call(ctx, "steps/toolCallRequest", tool("ls", nil), acsclient.WithKey("k1", []byte("not-the-key-material-at-all!!")))
	if err != nil || forged.ErrorCode() != -32004 {
		t.Fatalf("a wrong signature after the restart: %v %s, want -32004", err, forged.Raw)
	}
	// The session continues: its chain head is the one published last.
	r, err = c2.Call(ctx, "steps/toolCallRequest", tool("ls", map[string]any{"dir": "/tmp"}), acsclient.WithChainHash(head))
	acsStep(t, c2, r, err, "allow", &head)
	r, err = c2.Call(ctx, "steps/sessionEnd", map[string]any{"session_reason": "completed"})
	acsStep(t, c2, r, err, "allow", &head)
	after, err := c2.Call(ctx, "steps/userMessage", text("one more"))
	if err != nil || after.ErrorCode() != -32000 {
		t.Fatalf("a step after sessionEnd: %v %s, want -32000", err, after.Raw)
	}

	// The chain, as warden serves it, verifies from its root to the head
	// the last answer published: 11 content-bearing steps.
	code, body = send(t, "GET", srv.url+"/api/acs/sessions/"+c.SessionID(), "", "", "", "")
	if code != http.StatusOK {
		t.Fatalf("/api/acs/sessions: %d %s", code, body)
	}
	var got struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	for _, e := range got.Entries {
		delete(e, "record_id") // warden's cross-reference, not part of the ContextEntry
	}
	h, err := acsclient.VerifyChain(got.Entries)
	if err != nil || h != head || len(got.Entries) != 11 {
		t.Fatalf("chain of %d entries: head %s, err %v; want 11 entries and head %s", len(got.Entries), h, err, head)
	}
	// The trace has every decided step, on the acs surface.
	code, body = send(t, "GET", srv.url+"/api/runs?surface=acs&limit=100", "", "", "", "")
	if code != http.StatusOK || strings.Count(body, `"surface":"acs"`) < 11 {
		t.Fatalf("/api/runs?surface=acs: %d, %d records: %.300s", code, strings.Count(body, `"surface":"acs"`), body)
	}
}
