package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAttackCLIRedirect: `warden approvals` and `warden hook --server`
// send a bearer token to a warden server; a server (or something in its
// place) that redirects does not get the token sent on to the Location,
// which Go would do for another port of the same host.
func TestAttackCLIRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		t.Errorf("the redirect target got %s %s with Authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(other.Close)
	var asked atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	t.Setenv("WARDEN_TOKEN", "cli-secret-token")

	if _, errs, code := runCmd(t, "", "approvals", "list", "--server", front.URL); code == 0 {
		t.Errorf("approvals list through a redirect: exit 0 (%s)", errs)
	}
	out, _, code := runCmd(t, `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"x","tool_input":{}}`,
		"hook", "gemini", "--server", front.URL, "--timeout", "5s")
	if code != 0 || !strings.HasPrefix(out, `{"decision":"deny"`) {
		t.Errorf("hook through a redirect: exit %d %s, want the host's deny", code, out)
	}
	if asked.Load() < 2 {
		t.Fatalf("the front server was asked %d times: the test proves nothing", asked.Load())
	}
	if leaked.Load() != 0 {
		t.Fatalf("a redirect was followed %d times", leaked.Load())
	}
}
