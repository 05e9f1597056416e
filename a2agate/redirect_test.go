package a2agate

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestAttackUpstreamRedirect: an A2A upstream answering a redirect to
// another host made the proxy send the message (or the agent card fetch)
// there with the headers configured for the upstream, and relay that host's
// answer. No redirect is followed: message/send and message/stream are
// answered with the upstream-failure error, the agent card with 502, the
// other host is never reached, and the log names where the redirect
// pointed and no configured secret.
func TestAttackUpstreamRedirect(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, fmt.Sprintf("%s %s X-Upstream-Token=%q", r.Method, r.URL.Path, r.Header.Get("X-Upstream-Token")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, ".well-known") {
			_, _ = io.WriteString(w, `{"name":"elsewhere","url":"http://elsewhere.example/","preferredTransport":"JSONRPC","skills":[]}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","role":"agent","messageId":"r","parts":[{"kind":"text","text":"from elsewhere"}]}}`)
	}))
	defer evil.Close()
	var status int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := status
		mu.Unlock()
		http.Redirect(w, r, evil.URL+r.URL.Path+"?from=warden", code)
	}))
	defer up.Close()
	var logs strings.Builder
	gw := newGateway(t, map[string]string{"a": up.URL + "/"}, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&logs, f+"\n", a...)
	}})

	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		mu.Lock()
		status = code
		mu.Unlock()
		want := fmt.Sprintf("upstream agent a answered HTTP %d, a redirect (not followed)", code)
		for _, method := range []string{"message/send", "message/stream"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`
			resp, err := http.Post(gw.URL+"/a2a/a", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), fmt.Sprintf(`"code":%d`, CodeUpstream)) || !strings.Contains(string(b), want) || strings.Contains(string(b), "elsewhere") {
				t.Errorf("%s, upstream %d: %d %s, want a %d error with %q", method, code, resp.StatusCode, b, CodeUpstream, want)
			}
		}
		resp, err := http.Get(gw.URL + "/a2a/a/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), fmt.Sprintf("upstream answered HTTP %d, a redirect (not followed)", code)) {
			t.Errorf("agent card, upstream %d: %d %s, want 502 naming the redirect", code, resp.StatusCode, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) > 0 {
		t.Fatalf("the redirect target was reached: %q", hits)
	}
	if !strings.Contains(logs.String(), "a redirect (not followed) to "+evil.URL) {
		t.Errorf("logs say nothing of the redirect's target:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("a configured header reached the logs:\n%s", logs.String())
	}
}
