package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/a2agate"
	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/mcpgate"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/storetest"
)

// surfaces records what reached each surface behind the guard.
type surfaces struct {
	mu   sync.Mutex
	hits map[string]int
	seen []*http.Request
}

func (s *surfaces) handler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[name]++
		s.seen = append(s.seen, r)
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
}

func (s *surfaces) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

// Tokens of the attack tests: one per scope, and tokens the config holds
// only as their sha256.
const (
	tokDecide  = "wdn_decide-0123456789abcdef"
	tokRead    = "wdn_read-0123456789abcdef"
	tokApprove = "wdn_approve-0123456789abcdef"
	tokAdmin   = "wdn_admin-0123456789abcdef"
)

func testAuth(t *testing.T) *auth.Config {
	t.Helper()
	c := &auth.Config{}
	for _, e := range []struct {
		name, tok, tenant string
		s                 auth.Scope
	}{
		{"agents", tokDecide, "acme", auth.Decide},
		{"viewer", tokRead, "", auth.Read},
		{"approver", tokApprove, "", auth.Approve},
		{"root", tokAdmin, "", auth.Admin},
	} {
		h, err := auth.ParseHash(auth.Hash(e.tok))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: e.s, Tenant: e.tenant})
	}
	return c
}

func newGuarded(t *testing.T, sec Security) (http.Handler, *surfaces) {
	t.Helper()
	s := &surfaces{hits: map[string]int{}}
	st := storetest.NewMem()
	h := New(Options{
		Routes: []Route{aos.Route(s.handler("aos")), acs.Route(s.handler("acs")), hooks.DispatchRoute(s.handler("dispatch")),
			mcpgate.Route(s.handler("mcp")), a2agate.Route(s.handler("a2a")), hooks.CatalogRoute(s.handler("catalog")),
			agbom.Route(s.handler("agbom")), fleet.InstancesRoute(s.handler("instances"))},
		Store: st, Metrics: NewMetrics(), Pprof: true, Security: sec,
	})
	return h, s
}

func do(h http.Handler, method, path, ct, origin, token string) *httptest.ResponseRecorder {
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, "http://warden.test:8787"+path, body)
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var deciding = []string{"/aos", "/acs", "/mcp/x", "/a2a/x", "/api/hooks/dispatch"}

// TestAttackCrossOriginSimpleRequest is issue 8 item 1: a web page's
// cross-origin text/plain POST (no preflight) to every deciding surface is
// refused, with and without auth, and nothing reaches the surface (so no
// gateway attaches upstream credentials, no hook runs).
func TestAttackCrossOriginSimpleRequest(t *testing.T) {
	for _, withAuth := range []bool{false, true} {
		sec := Security{}
		token := ""
		if withAuth {
			sec.Auth, token = testAuth(t), tokAdmin // even a valid token in the page's hands
		}
		h, s := newGuarded(t, sec)
		for _, p := range deciding {
			for _, ct := range []string{"text/plain", "application/json", "application/x-www-form-urlencoded"} {
				for _, origin := range []string{"https://evil.example", "null", "http://warden.test:8787.evil.example", "http://warden.test:9999", "https://warden.test:8787"} {
					w := do(h, http.MethodPost, p, ct, origin, token)
					if w.Code != http.StatusForbidden {
						t.Errorf("auth=%v POST %s %s Origin %s: %d, want 403", withAuth, p, ct, origin, w.Code)
					}
				}
			}
			// No Origin (curl, an agent), but a browser-simple content type.
			for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"} {
				if w := do(h, http.MethodPost, p, ct, "", token); w.Code != http.StatusUnsupportedMediaType {
					t.Errorf("auth=%v POST %s %q: %d, want 415", withAuth, p, ct, w.Code)
				}
			}
		}
		if n := s.total(); n != 0 {
			t.Fatalf("auth=%v: %d refused requests reached a surface: %v", withAuth, n, s.hits)
		}
		// What is allowed: JSON from the same origin, a listed origin or no origin.
		for _, p := range deciding {
			for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
				for _, origin := range []string{"", "http://warden.test:8787", "HTTP://WARDEN.TEST:8787"} {
					if w := do(h, http.MethodPost, p, ct, origin, token); w.Code != http.StatusOK {
						t.Errorf("auth=%v POST %s %q Origin %q: %d, want 200: %s", withAuth, p, ct, origin, w.Code, w.Body)
					}
				}
			}
		}
	}
	sec := Security{Origins: []string{"https://console.example.com:443"}}
	h, s := newGuarded(t, sec)
	if w := do(h, http.MethodPost, "/aos", "application/json", "https://console.example.com", ""); w.Code != 200 {
		t.Errorf("listed origin: %d", w.Code)
	}
	if w := do(h, http.MethodPost, "/aos", "application/json", "http://console.example.com", ""); w.Code != 403 {
		t.Errorf("listed origin's host over http: %d", w.Code)
	}
	if w := do(h, http.MethodGet, "/api/hooks/runs", "", "https://evil.example", ""); w.Code != 403 {
		t.Errorf("cross-origin GET of the trace: %d", w.Code)
	}
	if s.total() != 1 {
		t.Errorf("hits %v", s.hits)
	}
}

// TestAttackScopes is the 401/403 table: each surface × each scope.
func TestAttackScopes(t *testing.T) {
	h, s := newGuarded(t, Security{Auth: testAuth(t)})
	type req struct{ method, path string }
	reqs := []struct {
		req
		need string // decide, read, admin, open
	}{
		{req{"POST", "/aos"}, "decide"},
		{req{"POST", "/acs"}, "decide"},
		{req{"POST", "/mcp/x"}, "decide"},
		{req{"GET", "/mcp/x"}, "decide"},
		{req{"DELETE", "/mcp/x"}, "decide"},
		{req{"POST", "/a2a/x"}, "decide"},
		{req{"GET", "/a2a/x/.well-known/agent.json"}, "decide"},
		{req{"POST", "/api/hooks/dispatch"}, "decide"},
		{req{"GET", "/api/hooks/runs"}, "read"},
		{req{"GET", "/api/hooks/events"}, "read"},
		{req{"GET", "/api/hooks/catalog"}, "read"},
		{req{"GET", "/api/agbom?agent=a"}, "read"},
		{req{"GET", "/"}, "read"},
		{req{"GET", "/metrics"}, "read"},
		{req{"GET", "/debug/pprof/"}, "admin"},
		{req{"GET", "/healthz"}, "open"},
		{req{"GET", "/readyz"}, "open"},
		{req{"GET", "/api/instances"}, "read"},
	}
	tokens := []struct{ name, tok string }{
		{"none", ""}, {"decide", tokDecide}, {"read", tokRead}, {"approve", tokApprove}, {"admin", tokAdmin},
		{"prefix of decide", tokDecide[:len(tokDecide)-1]},
		{"decide plus a byte", tokDecide + "0"},
		{"same prefix, last byte changed", tokDecide[:len(tokDecide)-1] + "e"},
		{"the stored sha256", auth.Hash(tokAdmin)},
	}
	for _, rq := range reqs {
		for _, tk := range tokens {
			want := http.StatusUnauthorized // no token, or not a configured one
			switch tk.name {
			case rq.need, "admin":
				want = http.StatusOK
			case "decide", "read", "approve":
				want = http.StatusForbidden // valid, without the scope
			}
			if rq.need == "open" {
				want = http.StatusOK
			}
			t.Run(rq.method+" "+rq.path+" "+tk.name, func(t *testing.T) {
				before := s.total()
				ct := ""
				if rq.method == "POST" {
					ct = "application/json"
				}
				w := do(h, rq.method, rq.path, ct, "", tk.tok)
				if w.Code != want {
					t.Fatalf("%d, want %d: %s", w.Code, want, w.Body)
				}
				if want == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without WWW-Authenticate: Bearer: %q", w.Header())
				}
				if want != http.StatusOK && s.total() != before {
					t.Errorf("a refused request reached a surface")
				}
				if tk.tok != "" && strings.Contains(w.Body.String(), tk.tok) {
					t.Errorf("the answer echoes the token: %s", w.Body)
				}
			})
		}
	}
	// Scheme names are case-insensitive; other schemes are not bearer tokens.
	r := httptest.NewRequest("POST", "/aos", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "bearer "+tokDecide)
	if w := httptest.NewRecorder(); func() int { h.ServeHTTP(w, r); return w.Code }() != 200 {
		t.Errorf("lower-case bearer refused")
	}
	r = httptest.NewRequest("POST", "/aos", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Basic "+tokDecide)
	if w := httptest.NewRecorder(); func() int { h.ServeHTTP(w, r); return w.Code }() != 401 {
		t.Errorf("Basic accepted")
	}
}

// TestGuardPassesPrincipalNotToken: a surface sees who asked (for the
// trace) and never the token (a gateway forwards Authorization upstream).
func TestGuardPassesPrincipalNotToken(t *testing.T) {
	h, s := newGuarded(t, Security{Auth: testAuth(t)})
	if w := do(h, "POST", "/mcp/x", "application/json", "", tokDecide); w.Code != 200 {
		t.Fatal(w.Code)
	}
	r := s.seen[0]
	if r.Header.Get("Authorization") != "" {
		t.Errorf("the token reached the gateway: %q", r.Header.Get("Authorization"))
	}
	if p := warden.PrincipalFrom(r.Context()); p != (warden.Principal{Name: "agents", Tenant: "acme"}) {
		t.Errorf("principal %+v", p)
	}
	// Without auth the client's Authorization passes (to an upstream that asks for it).
	h, s = newGuarded(t, Security{})
	if w := do(h, "POST", "/mcp/x", "application/json", "", "upstream-secret"); w.Code != 200 {
		t.Fatal(w.Code)
	}
	if s.seen[0].Header.Get("Authorization") != "Bearer upstream-secret" || warden.PrincipalFrom(s.seen[0].Context()) != (warden.Principal{}) {
		t.Errorf("no auth: header %q principal %+v", s.seen[0].Header.Get("Authorization"), warden.PrincipalFrom(s.seen[0].Context()))
	}
}

// A tenant's read token sees only its tenant's records; a token without a
// tenant sees every record (issue 8, acceptance: tenant-scoped reads).
func TestTenantReadsOnlyItsRecords(t *testing.T) {
	const acmeRead, betaRead = "wdn_acme-read-0123456789", "wdn_beta-read-0123456789"
	c := testAuth(t)
	for _, e := range []struct{ name, tok, tenant string }{{"acme-viewer", acmeRead, "acme"}, {"beta-viewer", betaRead, "beta"}} {
		h, err := auth.ParseHash(auth.Hash(e.tok))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: auth.Read, Tenant: e.tenant})
	}
	st := storetest.NewMem()
	for i, tenant := range []string{"acme", "beta", "acme", ""} {
		r := &audit.Record{ID: fmt.Sprint("r", i), Time: time.Now(), Event: "steps/message", Decision: "allow",
			Tenant: tenant, Results: []warden.Result{}, Input: []byte(`{}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h := New(Options{Routes: []Route{aos.Route(stub), hooks.DispatchRoute(stub), hooks.CatalogRoute(stub)}, Store: st, Metrics: NewMetrics(), Security: Security{Auth: c}})
	for _, tt := range []struct {
		tok, query string
		want       []string
	}{
		{acmeRead, "", []string{"r2", "r0"}},
		{acmeRead, "?session=", []string{"r2", "r0"}},
		{betaRead, "", []string{"r1"}},
		{tokRead, "", []string{"r3", "r2", "r1", "r0"}},
	} {
		w := do(h, http.MethodGet, "/api/hooks/runs"+tt.query, "", "", tt.tok)
		var recs []audit.Record
		if err := json.Unmarshal(w.Body.Bytes(), &recs); err != nil || w.Code != 200 {
			t.Fatalf("%d %s (%v)", w.Code, w.Body, err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tt.want) {
			t.Errorf("token %.12s…: records %v, want %v", tt.tok, ids, tt.want)
		}
	}
}
