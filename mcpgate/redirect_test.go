package mcpgate

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden"
)

// elsewhere is a server an upstream redirects to: it records every request
// it gets and the headers it saw, and answers as an MCP server would.
type elsewhere struct {
	mu   sync.Mutex
	hits []string
}

func (e *elsewhere) serve(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.hits = append(e.hits, fmt.Sprintf("%s %s X-Api-Key=%q Authorization=%q", r.Method, r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization")))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"from elsewhere"}]}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (e *elsewhere) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.hits...)
}

// TestAttackUpstreamRedirect: an MCP upstream answering a redirect to
// another host made the gateway send the call there with the headers
// configured for the upstream, and relay that host's answer. No redirect is
// followed (POST, the GET stream, DELETE; with the default client and with
// a caller's client that sets no CheckRedirect): the client gets the
// upstream-failure error, the other host is never reached, the log names
// where the redirect pointed and no configured secret.
func TestAttackUpstreamRedirect(t *testing.T) {
	evil := &elsewhere{}
	target := evil.serve(t).URL
	var status int
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := status
		mu.Unlock()
		http.Redirect(w, r, target+"/collect?from=warden", code)
	}))
	defer up.Close()
	cfg := map[string]warden.Upstream{"up": {Name: "up", URL: up.URL + "/mcp",
		Headers: map[string]string{"X-Api-Key": "upstream-api-key", "Authorization": "Bearer upstream-secret"}}}

	for _, client := range []struct {
		name string
		c    *http.Client
	}{{"default client", nil}, {"caller's client", &http.Client{}}} {
		t.Run(client.name, func(t *testing.T) {
			var logs strings.Builder
			var lmu sync.Mutex
			dec, _ := testDecider(t)
			front := httptest.NewServer(NewHTTP(dec, cfg, HTTPOptions{Client: client.c, Logf: func(f string, a ...any) {
				lmu.Lock()
				defer lmu.Unlock()
				fmt.Fprintf(&logs, f+"\n", a...)
			}}))
			defer front.Close()
			for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				mu.Lock()
				status = code
				mu.Unlock()
				httpCode, body := rawPost(t, front.URL+"/mcp/up", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, nil)
				want := fmt.Sprintf(`MCP server \"up\" answered HTTP %d, a redirect (not followed)`, code)
				if !strings.Contains(body, fmt.Sprintf(`"code":%d`, CodeUpstream)) || !strings.Contains(body, want) || strings.Contains(body, "elsewhere") {
					t.Errorf("POST, upstream %d: %d %s, want a %d error with %s", code, httpCode, body, CodeUpstream, want)
				}
				for _, method := range []string{http.MethodGet, http.MethodDelete} {
					req, _ := http.NewRequest(method, front.URL+"/mcp/up", nil)
					req.Header.Set("Accept", "text/event-stream")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), want) {
						t.Errorf("%s, upstream %d: %d %s, want 502 with %s", method, code, resp.StatusCode, b, want)
					}
				}
			}
			if hits := evil.seen(); len(hits) > 0 {
				t.Fatalf("the redirect target was reached: %q", hits)
			}
			lmu.Lock()
			defer lmu.Unlock()
			if !strings.Contains(logs.String(), "a redirect (not followed) to "+target) {
				t.Errorf("logs say nothing of the redirect's target:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), "upstream-api-key") || strings.Contains(logs.String(), "upstream-secret") {
				t.Errorf("a configured header reached the logs:\n%s", logs.String())
			}
		})
	}
}
