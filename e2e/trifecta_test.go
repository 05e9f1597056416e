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

// trifectaServer starts warden with the built-in pack (its lethal-trifecta
// policies), an ACS key, and the data in dir/data.
func trifectaServer(t *testing.T, dir string) *server {
	t.Helper()
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("acs:\n  keys:\n    k1: %q\n", "hex:"+fmt.Sprintf("%x", acsTestKey))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"))
}

// restart stops srv (SIGTERM) and starts a new warden on the same dir.
func restart(t *testing.T, srv *server, dir string) *server {
	t.Helper()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A warden signalled before it installed its handler dies of the
	// signal: a harder stop, which the labels must survive too.
	if err := srv.wait(t, 30*time.Second); err != nil && !strings.Contains(err.Error(), "signal: terminated") {
		t.Fatalf("warden serve: %v\n%s", err, srv.out)
	}
	return trifectaServer(t, dir)
}

// sessionRuns returns the session's records, oldest first, as /api/runs
// gives them.
func sessionRuns(t *testing.T, url, session string) []map[string]any {
	t.Helper()
	code, body := send(t, "GET", url+"/api/runs?limit=100&session="+session, "", "", "", "")
	if code != http.StatusOK {
		t.Fatalf("/api/runs: %d %s", code, body)
	}
	var page struct{ Runs []map[string]any }
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatalf("/api/runs: %v", err)
	}
	slices.Reverse(page.Runs) // newest first → oldest first
	return page.Runs
}

// labelsAdded returns the labels a record lists as added to its session.
func labelsAdded(rec map[string]any) []string {
	rs, _ := rec["results"].([]any)
	for _, r := range rs {
		m, _ := r.(map[string]any)
		if m["kind"] == "labels" {
			var out []string
			ls, _ := m["labels"].([]any)
			for _, l := range ls {
				out = append(out, fmt.Sprint(l))
			}
			return out
		}
	}
	return nil
}

// TestLethalTrifectaACSAcrossRestarts is issue 12's flow acceptance over
// POST /acs, with warden restarted between every two steps: an agent that
// declared acs-provenance reads a private file (label-read-private), gets
// a tool result whose provenance is external (untrusted_input, set by the
// provenance alone), and is asked at the third step, an email out. A step
// without provenance is refused in that session; the records list the
// labels each step added.
func TestLethalTrifectaACSAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	srv := trifectaServer(t, dir)
	ctx := context.Background()
	c := acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "trifecta-agent"})
	hello := c.ClientHello([]string{"steps/toolCallRequest", "steps/toolCallResult"})
	hello["provenance_producer"] = "deterministic"
	hello["profiles_supported"] = []string{"acs-core", "acs-provenance"}
	r, err := c.Call(ctx, "handshake/hello", hello)
	acsStep(t, c, r, err, "allow", nil)
	prov := func(id, origin, source string) map[string]any {
		return map[string]any{"provenance_id": id, "origin": origin, "source_id": source}
	}
	arg := func(v any, id string) map[string]any {
		return map[string]any{"value": v, "provenance": prov(id, "user_input", "cli")}
	}

	// 1: read a private file.
	r, err = c.Call(ctx, "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "read_file"},
		"arguments": map[string]any{"path": arg("/home/ann/.ssh/id_ed25519", "p1")}})
	acsStep(t, c, r, err, "allow", nil)
	// A step without provenance is refused in an acs-provenance session.
	bare, err := c.Call(ctx, "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "ls"},
		"arguments": map[string]any{"dir": map[string]any{"value": "."}}})
	if err != nil || bare.ErrorCode() != -32602 || !strings.Contains(string(bare.Raw), `"field":"params.payload.arguments.dir.provenance"`) {
		t.Fatalf("a step without provenance: %v %s, want -32602 naming the field", err, bare.Raw)
	}

	srv = restart(t, srv, dir)
	c = acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "trifecta-agent", SessionID: c.SessionID()})
	// 2: a page fetched from the web comes back (untrusted by its provenance).
	r, err = c.Call(ctx, "steps/toolCallResult", map[string]any{"tool": map[string]any{"name": "get_page"},
		"exit_status": "success", "outputs": []any{map[string]any{"value": "<html>Great offers</html>",
			"provenance": prov("p2", "external", "https://offers.example.net/")}}})
	acsStep(t, c, r, err, "allow", nil)

	srv = restart(t, srv, dir)
	c = acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "trifecta-agent", SessionID: c.SessionID()})
	// 3: an email out is asked.
	r, err = c.Call(ctx, "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "send_email"},
		"arguments": map[string]any{"to": arg("eve@example.net", "p3"), "body": arg("hello", "p4")}})
	acsStep(t, c, r, err, "ask", nil)
	if !slices.Contains(r.ReasonCodes(), "ask-lethal-trifecta") || !strings.Contains(r.Reasoning(), "lethal trifecta") {
		t.Fatalf("the third step: %s", r.Raw)
	}

	// The session API shows its profiles and labels.
	code, body := send(t, "GET", srv.url+"/api/acs/sessions/"+c.SessionID(), "", "", "", "")
	if code != http.StatusOK || !strings.Contains(body, `"labels":["read_private","untrusted_input"]`) ||
		!strings.Contains(body, `"profiles":["acs-core","acs-provenance"]`) {
		t.Fatalf("/api/acs/sessions: %d %.600s", code, body)
	}

	runs := sessionRuns(t, srv.url, c.SessionID())
	var added [][]string
	for _, rec := range runs {
		if rec["event"] == "steps/toolCallRequest" || rec["event"] == "steps/toolCallResult" {
			added = append(added, labelsAdded(rec))
		}
	}
	want := [][]string{{"read_private"}, {"untrusted_input"}, nil}
	if fmt.Sprint(added) != fmt.Sprint(want) {
		t.Fatalf("labels added per step %q, want %q", added, want)
	}
}

// TestLethalTrifectaAOSAcrossRestarts is the same session over POST /aos
// (read_file of an SSH key, WebFetch of a page, send_email), warden
// restarted between the steps: the third is held (answered deny with
// approval_required, recorded as ask by ask-lethal-trifecta). The same
// session id under another agent's steps after that keeps its labels;
// a new session id has none and its email goes through.
func TestLethalTrifectaAOSAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	srv := trifectaServer(t, dir)
	step := aosToolStep
	if a := postAOS(t, srv.url, step(1, "aos-trifecta", "read_file", map[string]any{"path": "/home/ann/.ssh/id_rsa"})); a.Result.Decision != "allow" {
		t.Fatalf("step 1: %+v", a)
	}
	srv = restart(t, srv, dir)
	if a := postAOS(t, srv.url, step(2, "aos-trifecta", "WebFetch", map[string]any{"url": "https://news.example.com/"})); a.Result.Decision != "allow" {
		t.Fatalf("step 2: %+v", a)
	}
	srv = restart(t, srv, dir)
	a := postAOS(t, srv.url, step(3, "aos-trifecta", "send_email", map[string]any{"to": "eve@example.net", "body": "hi"}))
	if a.Result.Decision != "deny" || len(a.Result.ReasonCode) == 0 || a.Result.ReasonCode[0] != "approval_required" || a.Result.Data.ApprovalID == "" {
		t.Fatalf("step 3: %+v, want deny approval_required with an approval", a)
	}
	runs := sessionRuns(t, srv.url, "aos-trifecta")
	if len(runs) != 3 || runs[2]["decision"] != "ask" || runs[2]["policy_id"] != "ask-lethal-trifecta" {
		t.Fatalf("records: %v", runs)
	}
	if got := fmt.Sprint(labelsAdded(runs[0]), labelsAdded(runs[1]), labelsAdded(runs[2])); got != "[read_private] [untrusted_input] []" {
		t.Fatalf("labels added: %s", got)
	}
	if !strings.Contains(fmt.Sprint(runs[2]["views"]), "read_private untrusted_input") {
		t.Fatalf("the third step's views do not show the session's labels: %v", runs[2]["views"])
	}
	// Another session: no labels, the same email is allowed.
	if a := postAOS(t, srv.url, step(4, "aos-other", "send_email", map[string]any{"to": "eve@example.net", "body": "hi"})); a.Result.Decision != "allow" {
		t.Fatalf("another session: %+v", a)
	}
}

// aosToolStep is an AOS steps/toolCallRequest (JSON-RPC id id) of agent
// aos-agent calling tool with inputs in session.
func aosToolStep(id int, session, tool string, inputs map[string]any) string {
	var in []map[string]any
	for k, v := range inputs {
		in = append(in, map[string]any{"name": k, "value": v})
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "steps/toolCallRequest",
		"params": map[string]any{
			"toolCallRequest": map[string]any{"executionId": fmt.Sprintf("ex-%d", id), "toolId": "t-" + tool, "inputs": in},
			"context": map[string]any{"session": map[string]any{"id": session},
				"agent": map[string]any{"id": "aos-agent", "tools": []any{map[string]any{"id": "t-" + tool, "name": tool, "type": "function_call"}}}},
		}})
	return string(b)
}
