package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/mcpgate"
	"github.com/wardenhq/warden/storetest"
)

// sessionServer is the server with auth, console sessions and approvals
// (one pending approval, "ap-1").
func sessionServer(t *testing.T, cfg *auth.Config, key []byte) (http.Handler, *auth.Sessions, *surfaces) {
	t.Helper()
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	now := time.Now().UTC()
	if err := st.CreateApproval(context.Background(), &approval.Approval{ID: "ap-1", State: approval.ApprovalPending,
		Event: "protocols/MCP", Surface: "mcp", Tool: "send_email", Created: now, Expires: now.Add(time.Hour), Key: "k", Caller: "agents"}); err != nil {
		t.Fatal(err)
	}
	sessions := auth.NewSessions(key, cfg)
	s := &surfaces{hits: map[string]int{}}
	h := New(Options{Routes: []Route{aos.Route(s.handler("aos")), mcpgate.Route(s.handler("mcp"))}, Store: st, Approvals: m,
		Security: Security{Auth: cfg, Sessions: sessions}})
	return h, sessions, s
}

// cookieReq is a request carrying the session cookie value.
func cookieReq(h http.Handler, method, path, origin, cookie, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://warden.test:8787"+path, strings.NewReader(body))
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	} else {
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8") // as a browser navigates
	}
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if cookie != "" {
		r.Header.Set("Cookie", auth.SessionCookie+"="+cookie+"; theme=dark")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func tokenNamed(t *testing.T, cfg *auth.Config, name string) auth.Token {
	t.Helper()
	for _, tok := range cfg.Tokens {
		if tok.Name == name {
			return tok
		}
	}
	t.Fatalf("no token %s", name)
	return auth.Token{}
}

// TestAttackSessionCookie is the console's sign-in attack suite: a forged,
// an expired, and a removed token's cookie are refused; a cookie needs a
// same-origin Origin on a POST (CSRF); a read-only session cannot approve;
// the cookie never reaches a gateway.
func TestAttackSessionCookie(t *testing.T) {
	const self = "http://warden.test:8787"
	cfg := testAuth(t)
	key := bytes.Repeat([]byte{3}, auth.SessionKeySize)
	h, sessions, s := sessionServer(t, cfg, key)
	viewer, _ := sessions.Issue(tokenNamed(t, cfg, "viewer"))
	approver, _ := sessions.Issue(tokenNamed(t, cfg, "approver"))
	root, _ := sessions.Issue(tokenNamed(t, cfg, "root"))
	agents, _ := sessions.Issue(tokenNamed(t, cfg, "agents"))

	expiredS := auth.NewSessions(key, cfg)
	expiredS.Now = func() time.Time { return time.Now().Add(-auth.SessionTTL - time.Minute) }
	expired, _ := expiredS.Issue(tokenNamed(t, cfg, "viewer"))
	parts := strings.Split(viewer, ".")
	forged := parts[0] + "." + parts[1] + "." + parts[2] + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	otherKey, _ := auth.NewSessions(bytes.Repeat([]byte{4}, auth.SessionKeySize), cfg).Issue(tokenNamed(t, cfg, "root"))

	decide := `{"decision":"approve","reason":"ok"}`
	tests := []struct {
		name                 string
		method, path, origin string
		cookie, body         string
		want                 int
		location             string
	}{
		{"a valid read session reads the trace", "GET", "/api/hooks/runs", "", viewer, "", 200, ""},
		{"a valid read session reads a page", "GET", "/decisions", "", viewer, "", 200, ""},
		{"no cookie: the page sends the browser to sign in", "GET", "/approvals/ap-1", "", "", "", 303, "/login?next=%2Fapprovals%2Fap-1"},
		{"no cookie: the API answers 401", "GET", "/api/hooks/runs", "", "", "", 401, ""},
		{"forged cookie", "GET", "/api/hooks/runs", "", forged, "", 401, ""},
		{"forged cookie on a page", "GET", "/overview", "", forged, "", 303, "/login?next=%2Foverview"},
		{"cookie signed with another key", "GET", "/api/hooks/runs", "", otherKey, "", 401, ""},
		{"expired cookie", "GET", "/api/hooks/runs", "", expired, "", 401, ""},
		{"a read session cannot approve", "POST", "/api/approvals/ap-1", self, viewer, decide, 403, ""},
		{"cross-origin POST with a valid cookie", "POST", "/api/approvals/ap-1", "https://evil.example", approver, decide, 403, ""},
		{"POST with a valid cookie and no Origin", "POST", "/api/approvals/ap-1", "", approver, decide, 403, ""},
		{"POST with a valid cookie from a sibling port", "POST", "/api/approvals/ap-1", "http://warden.test:9999", root, decide, 403, ""},
		{"a decide session's cookie is no decide credential without Origin", "POST", "/aos", "", agents, "{}", 403, ""},
		{"an approve session approves, same origin", "POST", "/api/approvals/ap-1", self, approver, decide, 200, ""},
		{"deciding twice", "POST", "/api/approvals/ap-1", self, root, decide, 409, ""},
		{"the sign-in page and static files are open", "GET", "/login", "", "", "", 200, ""},
		{"static", "GET", "/static/console.css", "", "", "", 200, ""},
		{"sign-in is open (its own checks apply)", "POST", "/api/session", self, "", `{"token":"` + tokRead + `"}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cookieReq(h, tt.method, tt.path, tt.origin, tt.cookie, tt.body)
			if w.Code != tt.want {
				t.Fatalf("%d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if tt.location != "" && w.Header().Get("Location") != tt.location {
				t.Errorf("Location %q, want %q", w.Header().Get("Location"), tt.location)
			}
		})
	}
	if n := s.total(); n != 0 {
		t.Errorf("refused requests reached a surface: %v", s.hits)
	}
	// The approver decided as itself: the approval names it.
	w := cookieReq(h, "GET", "/api/approvals/ap-1", "", root, "")
	if !strings.Contains(w.Body.String(), `"decided_by":"approver"`) {
		t.Errorf("approval after: %s", w.Body)
	}
	// A session's cookie is not forwarded: a gateway sees the other cookies only.
	w = cookieReq(h, "POST", "/mcp/x", self, agents, "{}")
	if w.Code != 200 || len(s.seen) != 1 {
		t.Fatalf("same-origin POST with a decide session: %d", w.Code)
	}
	if c := s.seen[0].Header.Get("Cookie"); strings.Contains(c, auth.SessionCookie) || !strings.Contains(c, "theme=dark") {
		t.Errorf("the gateway saw Cookie %q", c)
	}
	// A page asked for by an API client (no text/html in Accept): 401, not a redirect.
	r0 := httptest.NewRequest("GET", self+"/decisions", nil)
	r0.Header.Set("Accept", "application/json")
	rw0 := httptest.NewRecorder()
	h.ServeHTTP(rw0, r0)
	if rw0.Code != 401 {
		t.Errorf("a page for an API client: %d", rw0.Code)
	}
	// A bearer header, even a bad one, is the credential: the cookie is not used.
	r := httptest.NewRequest("GET", self+"/api/hooks/runs", nil)
	r.Header.Set("Authorization", "Bearer wdn_wrong")
	r.Header.Set("Cookie", auth.SessionCookie+"="+viewer)
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	if rw.Code != 401 {
		t.Errorf("bad bearer with a good cookie: %d", rw.Code)
	}
}

// A token removed from the config (a restart with another config, the same
// session key) ends its sessions; one given a new hash too.
func TestAttackSessionOfRemovedToken(t *testing.T) {
	cfg := testAuth(t)
	key := bytes.Repeat([]byte{5}, auth.SessionKeySize)
	_, sessions, _ := sessionServer(t, cfg, key)
	viewer, _ := sessions.Issue(tokenNamed(t, cfg, "viewer"))
	removed := &auth.Config{}
	rehashed := &auth.Config{}
	for _, tok := range cfg.Tokens {
		if tok.Name != "viewer" {
			removed.Tokens = append(removed.Tokens, tok)
		} else {
			tok.SHA256[0] ^= 1
		}
		rehashed.Tokens = append(rehashed.Tokens, tok)
	}
	for name, c := range map[string]*auth.Config{"same config": cfg, "token removed": removed, "token rehashed": rehashed} {
		h, _, _ := sessionServer(t, c, key)
		w := cookieReq(h, "GET", "/api/hooks/runs", "", viewer, "")
		want := 401
		if name == "same config" {
			want = 200 // a restart keeps sessions
		}
		if w.Code != want {
			t.Errorf("%s: %d, want %d", name, w.Code, want)
		}
	}
}
