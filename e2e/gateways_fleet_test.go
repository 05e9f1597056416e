package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

// alternate sends each request to the next of hosts: a balancer without
// session affinity.
type alternate struct {
	mu    sync.Mutex
	n     int
	hosts []string
	hits  map[string]int
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	h := a.hosts[a.n%len(a.hosts)]
	a.n++
	a.hits[h]++
	a.mu.Unlock()
	r = r.Clone(r.Context())
	u, _ := url.Parse(h)
	r.URL.Host, r.Host = u.Host, u.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPSessionAcrossServes is issue 14's sticky-free gateway against the
// binary: two `warden serve` with their own data directories and the same
// gateways.session_key, one MCP server behind both, and a go-sdk client whose
// requests alternate between them for a whole session. A third serve
// without the key refuses the session (404), never forwarding it.
func TestMCPSessionAcrossServes(t *testing.T) {
	bin := wardenBinary(t)
	srv, seen := mcpserver.New()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	t.Setenv("WARDEN_E2E_SESSION_KEY", "hex:"+strings.Repeat("42", 32))
	mcpConf := fmt.Sprintf("mcp:\n  servers:\n    up: {url: %q}\n", up.URL)
	keyed := filepath.Join(dir, "keyed.yaml")
	keyless := filepath.Join(dir, "keyless.yaml")
	if err := os.WriteFile(keyed, []byte(mcpConf+"gateways: {session_key: \"${WARDEN_E2E_SESSION_KEY}\", session_max_age: 1h}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyless, []byte(mcpConf), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startServer(t, bin, "--config", keyed, "--data", filepath.Join(dir, "a"))
	b := startServer(t, bin, "--config", keyed, "--data", filepath.Join(dir, "b"))
	c := startServer(t, bin, "--config", keyless, "--data", filepath.Join(dir, "c"))

	rr := &alternate{hosts: []string{a.url, b.url}, hits: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: a.url + "/mcp/up", HTTPClient: &http.Client{Transport: rr}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nA:\n%s\nB:\n%s", err, a.out, b.out)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint("hi ", i)}})
		if err != nil {
			t.Fatalf("call %d: %v\nA:\n%s\nB:\n%s", i, err, a.out, b.out)
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != fmt.Sprint("echo: hi ", i) {
			t.Fatalf("call %d: %+v", i, r.Content)
		}
	}
	if seen.Count("echo") != 5 || rr.hits[a.url] < 3 || rr.hits[b.url] < 3 {
		t.Fatalf("upstream echo calls %d, replica hits %v", seen.Count("echo"), rr.hits)
	}

	// The keyless replica cannot open the session: 404, nothing forwarded.
	req, _ := http.NewRequest(http.MethodPost, c.url+"/mcp/up", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || seen.Count("echo") != 5 {
		t.Fatalf("a replica without the key: HTTP %d, upstream echo calls %d; want 404 and 5", resp.StatusCode, seen.Count("echo"))
	}
	if !strings.Contains(c.out.String(), "gateways.session_key is not set") {
		t.Fatalf("the keyless replica did not say its ids open on it only:\n%s", c.out)
	}
}
