package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// approveAll approves, through a running warden's /api/approvals, every
// approval that is pending, until the test ends; it returns the policies of
// those it approved so far.
func approveAll(t *testing.T, url string) func() []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var list struct {
				Approvals []struct {
					ID       string `json:"id"`
					PolicyID string `json:"policy_id"`
				} `json:"approvals"`
			}
			if resp, err := http.Get(url + "/api/approvals?state=pending"); err == nil {
				_ = json.NewDecoder(resp.Body).Decode(&list)
				resp.Body.Close()
			}
			for _, a := range list.Approvals {
				// Locked across the decision: the call it releases may be
				// answered before the append.
				mu.Lock()
				resp, err := http.Post(url+"/api/approvals/"+a.ID, "application/json",
					bytes.NewReader([]byte(`{"decision":"approve","reason":"e2e"}`)))
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						seen = append(seen, a.PolicyID)
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestAskOncePeers: an ask written the natural way (no direction) asks once
// for a call and its answer, with the real binary and the official clients:
// the MCP TypeScript SDK through /mcp/{server} and through `warden mcp
// stdio` (held in that process, approved through a server sharing its
// data directory), and the @a2a-js/sdk client through /a2a/{agent}, send
// and stream. Before the fix each answer asked a second time and the
// approved call hung until the client's timeout.
func TestAskOncePeers(t *testing.T) {
	t.Run("mcp-http", func(t *testing.T) {
		nodeDir := nodeGroup(t, "mcp-http")
		bin := wardenBinary(t)
		cfg := writeConfig(t, map[string]string{"everything": serverEverything(t, nodeDir)}, nil)
		srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir(), "--builtin=false", "--policy", filepath.Join(nodeDir, "policies/ask.yaml"))
		approved := approveAll(t, srv.url)
		runScript(t, nodeDir, 90*time.Second, "ask_once_client.mjs", "--mcp-http", srv.url+"/mcp/everything")
		if got := approved(); len(got) != 1 || got[0] != "e2e-ask-echo" {
			t.Errorf("approvals of %v, want one of e2e-ask-echo", got)
		}
	})
	t.Run("mcp-stdio", func(t *testing.T) {
		nodeDir := nodeGroup(t, "mcp-stdio")
		bin := wardenBinary(t)
		data := t.TempDir()
		pol := filepath.Join(nodeDir, "policies/ask.yaml")
		srv := startServer(t, bin, "--data", data, "--builtin=false", "--policy", pol)
		approved := approveAll(t, srv.url)
		runScript(t, nodeDir, 90*time.Second, "ask_once_client.mjs", "--mcp-stdio", "--",
			bin, "mcp", "stdio", "--builtin=false", "--policy", pol, "--data", data, "--name", "everything", "--",
			"node", filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio")
		if got := approved(); len(got) != 1 || got[0] != "e2e-ask-echo" {
			t.Errorf("approvals of %v, want one of e2e-ask-echo", got)
		}
	})
	t.Run("a2a", func(t *testing.T) {
		nodeDir := nodeGroup(t, "a2a")
		bin := wardenBinary(t)
		cfg := writeConfig(t, nil, map[string]string{"echo": a2aAgent(t, nodeDir) + "/"})
		srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir(), "--builtin=false", "--policy", filepath.Join(nodeDir, "policies/ask.yaml"))
		approved := approveAll(t, srv.url)
		runScript(t, nodeDir, 90*time.Second, "ask_once_client.mjs", "--a2a", srv.url+"/a2a/echo")
		if got := approved(); len(got) != 2 || got[0] != "e2e-ask-wire" || got[1] != "e2e-ask-wire" {
			t.Errorf("approvals of %v, want two of e2e-ask-wire (the send and the stream)", got)
		}
	})
}
