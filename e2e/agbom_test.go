package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listEverything lists the tools of /mcp/everything with the official MCP
// Go SDK client; capable declares sampling and elicitation, for which
// server-everything adds its trigger-sampling-request and
// trigger-elicitation-request tools (registered per session, once the
// client's capabilities are known).
func listEverything(t *testing.T, url string, capable bool) ([]string, error) {
	t.Helper()
	var opts *mcp.ClientOptions
	if capable {
		opts = &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "none", Role: "assistant", Content: &mcp.TextContent{Text: "no"}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "pin-e2e", Version: "1.0.0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp/everything", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect through warden: %v", err)
	}
	defer cs.Close()
	// The conditional tools are registered right after initialization.
	time.Sleep(300 * time.Millisecond)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, nil
}

// TestToolPinningEverything is issue 12's tool-pinning acceptance with the
// official @modelcontextprotocol/server-everything behind /mcp/everything.
// server-everything's tool list changes between two tools/list calls
// when the second client declares sampling and elicitation: two tools are
// added (the published package has no way to change a description; the
// description and schema change is TestToolPinning in mcpgate, with the
// official go-sdk server). The first list pins; warden restarts (the pins
// are in the store); the changed list is asked by the built-in
// ask-mcp-tool-change, refused when nobody approves within approvals.wait
// and recorded with the added definitions in its views; the next one is
// approved through POST /api/approvals/{id} and let through, and the
// added tools are pinned: the list after that is not asked again. The
// AgBOM at /api/agbom shows the server and its tools.
func TestToolPinningEverything(t *testing.T) {
	nodeDir := nodeGroup(t, "mcp-http")
	upstream := serverEverything(t, nodeDir)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("mcp:\n  servers:\n    everything: {url: %q}\napprovals: {wait: 2s}\n", upstream)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	srv := startServer(t, wardenBinary(t), "--config", cfg, "--data", data)

	plain, err := listEverything(t, srv.url, false)
	if err != nil {
		t.Fatalf("first tools/list: %v\n%s", err, srv.out)
	}
	if slices.Contains(plain, "trigger-sampling-request") || !slices.Contains(plain, "echo") {
		t.Fatalf("first list: %v", plain)
	}
	t.Logf("pinned %d tools: %v", len(plain), plain)

	// The pins survive a restart.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.wait(t, 30*time.Second); err != nil {
		t.Fatalf("warden did not stop cleanly: %v", err)
	}
	srv = startServer(t, wardenBinary(t), "--config", cfg, "--data", data)

	start := time.Now()
	_, err = listEverything(t, srv.url, true)
	if err == nil || !strings.Contains(err.Error(), "approval") {
		t.Fatalf("changed tools/list with nobody approving: err = %v, want a refusal (approval_timeout)\n%s", err, srv.out)
	}
	t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
	code, body := send(t, "GET", srv.url+"/api/runs?decision=ask&surface=mcp", "", "", "", "")
	if code != 200 {
		t.Fatalf("GET /api/runs: %d %s", code, body)
	}
	var runs struct {
		Runs []struct {
			PolicyID   string `json:"policy_id"`
			Reason     string `json:"reason"`
			ApprovalID string `json:"approval_id"`
			Views      struct {
				MCP struct {
					ToolChanges []struct {
						Change, Server, Name string
						New                  *struct{ Description, Hash string }
					} `json:"tool_changes"`
				} `json:"mcp"`
			} `json:"views"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(body), &runs); err != nil || len(runs.Runs) != 1 {
		t.Fatalf("asked MCP records: %v %s", err, body)
	}
	rec := runs.Runs[0]
	added := map[string]bool{}
	for _, c := range rec.Views.MCP.ToolChanges {
		if c.Change == "added" && c.Server == "everything" && c.New != nil && c.New.Description != "" && len(c.New.Hash) == 64 {
			added[c.Name] = true
		}
	}
	if rec.PolicyID != "ask-mcp-tool-change" || !added["trigger-sampling-request"] || !added["trigger-elicitation-request"] {
		t.Fatalf("the asked record: %+v", rec)
	}
	t.Logf("recorded: %s", rec.Reason)
	code, body = send(t, "GET", srv.url+"/api/approvals/"+rec.ApprovalID, "", "", "", "")
	if code != 200 || !strings.Contains(body, `"state":"expired"`) {
		t.Fatalf("the approval of the refused list: %d %s", code, body)
	}

	// Again, approved while it is held.
	approved := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			_, b := send(t, "GET", srv.url+"/api/approvals?state=pending", "", "", "", "")
			var list struct {
				Approvals []struct{ ID string } `json:"approvals"`
			}
			if json.Unmarshal([]byte(b), &list) == nil && len(list.Approvals) == 1 {
				c, b := send(t, "POST", srv.url+"/api/approvals/"+list.Approvals[0].ID, "application/json", "", "", `{"decision":"approve","reason":"reviewed the sampling tools"}`)
				approved <- fmt.Sprint(c, " ", b)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		approved <- "nothing to approve"
	}()
	capable, err := listEverything(t, srv.url, true)
	if err != nil {
		t.Fatalf("approved tools/list: %v (approval: %s)", err, <-approved)
	}
	if a := <-approved; !strings.HasPrefix(a, "200 ") {
		t.Fatalf("approving: %s", a)
	}
	if !slices.Contains(capable, "trigger-sampling-request") || len(capable) <= len(plain) {
		t.Fatalf("approved list: %v", capable)
	}

	// Now pinned: the same list, and the plain one, pass without a question.
	for _, c := range []bool{true, false} {
		if _, err := listEverything(t, srv.url, c); err != nil {
			t.Fatalf("tools/list after the approval (capable %v): %v", c, err)
		}
	}
	if _, body := send(t, "GET", srv.url+"/api/approvals", "", "", "", ""); strings.Count(body, `"id"`) != 2 {
		t.Errorf("want exactly 2 approvals (the expired and the approved): %s", body)
	}
	code, body = send(t, "GET", srv.url+"/api/agbom?agent=default", "", "", "", "")
	if code != 200 || !strings.Contains(body, `"bom-ref": "urn:mcp:everything"`) ||
		!strings.Contains(body, `"bom-ref": "urn:mcp:everything:tool:echo"`) || strings.Contains(body, `"value": "changed"`) {
		t.Fatalf("GET /api/agbom: %d %.600s", code, body)
	}
}

var rugpullListeningRE = regexp.MustCompile(`mcp rugpull server listening on (http://\S+)`)

// TestToolRugPull: a server built with the official TypeScript MCP SDK
// (e2e/node/mcp_rugpull_server.mjs) rewrites read_file's description and
// input schema between two tools/list calls through /mcp/rugpull. The
// changed list is refused when nobody approves (recorded with the old and
// the new definition), let through once approved (the new definition is
// pinned and the AgBOM shows it), and a server that then puts the old
// definition back is asked about again: it no longer matches the pin.
func TestToolRugPull(t *testing.T) {
	nodeDir := nodeGroup(t, "mcp-http")
	p := startProc(t, "mcp_rugpull_server.mjs", nodeDir, nil, "node", "mcp_rugpull_server.mjs", "0")
	upstream := p.waitOutput(t, rugpullListeningRE, 20*time.Second)[1]
	base := strings.TrimSuffix(upstream, "/mcp")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("mcp:\n  servers:\n    rugpull: {url: %q}\napprovals: {wait: 1s}\n", upstream)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"))
	list := func() ([]*mcp.Tool, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "rugpull-e2e", Version: "1.0.0"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp/rugpull", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return nil, err
		}
		return res.Tools, nil
	}
	flip := func(path string) {
		if code, body := send(t, "POST", base+path, "application/json", "", "", "{}"); code != 200 {
			t.Fatalf("POST %s: %d %s", path, code, body)
		}
	}
	approveNext := func() chan string {
		ch := make(chan string, 1)
		go func() {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				_, b := send(t, "GET", srv.url+"/api/approvals?state=pending", "", "", "", "")
				var l struct {
					Approvals []struct{ ID string } `json:"approvals"`
				}
				if json.Unmarshal([]byte(b), &l) == nil && len(l.Approvals) == 1 {
					c, b := send(t, "POST", srv.url+"/api/approvals/"+l.Approvals[0].ID, "application/json", "", "", `{"decision":"approve","reason":"checked"}`)
					ch <- fmt.Sprint(c, " ", b)
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			ch <- "nothing to approve"
		}()
		return ch
	}

	if tools, err := list(); err != nil || len(tools) != 2 {
		t.Fatalf("first list: %v %v\n%s", tools, err, srv.out)
	}
	flip("/rugpull")
	if _, err := list(); err == nil || !strings.Contains(err.Error(), "read_file (changed)") {
		t.Fatalf("the rug-pulled list: err = %v", err)
	}
	_, body := send(t, "GET", srv.url+"/api/runs?decision=ask&surface=mcp", "", "", "", "")
	if !strings.Contains(body, `"change":"changed","server":"rugpull","name":"read_file","old":{"name":"read_file","description":"Reads a text file and returns its contents."`) ||
		!strings.Contains(body, `~/.ssh/id_rsa`) || !strings.Contains(body, `"note"`) {
		t.Fatalf("the asked record's views: %.1500s", body)
	}
	ch := approveNext()
	tools, err := list()
	if a := <-ch; err != nil || !strings.HasPrefix(a, "200 ") {
		t.Fatalf("approved list: %v (approval: %s)", err, a)
	}
	if len(tools) != 2 || !strings.Contains(tools[0].Description+tools[1].Description, "id_rsa") {
		t.Fatalf("approved list: %+v", tools)
	}
	if _, err := list(); err != nil {
		t.Fatalf("the now-pinned list: %v", err)
	}
	_, body = send(t, "GET", srv.url+"/api/agbom?agent=default&format=acs", "", "", "", "")
	if !strings.Contains(body, `id_rsa`) || strings.Contains(body, `"state": "changed"`) {
		t.Fatalf("AgBOM after the approval: %.1500s", body)
	}
	// Back to the old definition: that is a change against the new pin.
	flip("/restore")
	if _, err := list(); err == nil || !strings.Contains(err.Error(), "read_file (changed)") {
		t.Fatalf("the restored list: err = %v", err)
	}
}
