package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/mcpgate"
)

// TestRefusalsAreJSONRPC: a 401 or 403 on /aos, /acs, /mcp/{server} and
// /a2a/{agent} is a JSON-RPC error response as well as the HTTP status —
// warden's own code, for the request's id when the body holds one request,
// else null — so a JSON-RPC client reads it as the answer to its call;
// other paths keep {"error": ...}. Nothing reaches a surface.
func TestRefusalsAreJSONRPC(t *testing.T) {
	h, s := newGuarded(t, Security{Auth: testAuth(t)})
	post := func(path, body, token, origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://warden.test:8787"+path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const req = `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{}}`
	cases := []struct {
		name, body, token, origin string
		status, code              int
		id                        any
	}{
		{"no token", req, "", "", 401, jsonrpc.CodeUnauthenticated, "call-7"},
		{"wrong token", req, "wdn_nope", "", 401, jsonrpc.CodeUnauthenticated, "call-7"},
		{"no decide scope", req, tokRead, "", 403, jsonrpc.CodeForbidden, "call-7"},
		{"cross origin", req, tokDecide, "https://evil.example", 403, jsonrpc.CodeForbidden, "call-7"},
		{"numeric id", `{"jsonrpc":"2.0","id":12,"method":"ping"}`, "", "", 401, jsonrpc.CodeUnauthenticated, float64(12)},
		{"batch: null id", `[` + req + `]`, "", "", 401, jsonrpc.CodeUnauthenticated, nil},
		{"not JSON: null id", `{"jsonrpc":`, "", "", 401, jsonrpc.CodeUnauthenticated, nil},
		{"over the peek: null id", `{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", maxIDPeek) + `"},"id":3,"method":"ping"}`, "", "", 401, jsonrpc.CodeUnauthenticated, nil},
	}
	for _, path := range []string{"/aos", "/acs", "/mcp/x", "/a2a/x"} {
		for _, c := range cases {
			t.Run(path+" "+c.name, func(t *testing.T) {
				before := s.total()
				w := post(path, c.body, c.token, c.origin)
				var resp struct {
					JSONRPC string `json:"jsonrpc"`
					ID      any    `json:"id"`
					Error   struct {
						Code    int               `json:"code"`
						Message string            `json:"message"`
						Data    map[string]string `json:"data"`
					} `json:"error"`
				}
				if w.Code != c.status || json.Unmarshal(w.Body.Bytes(), &resp) != nil || resp.JSONRPC != "2.0" ||
					resp.Error.Code != c.code || resp.ID != c.id || resp.Error.Message == "" || resp.Error.Data["name"] == "" {
					t.Fatalf("%d %s, want %d with JSON-RPC error %d for id %v", w.Code, w.Body, c.status, c.code, c.id)
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if c.status == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without WWW-Authenticate")
				}
				if s.total() != before {
					t.Errorf("a refused request reached a surface")
				}
			})
		}
	}
	// Elsewhere the body stays {"error": "..."}.
	w := post("/api/hooks/dispatch", `{"event":"x"}`, "", "")
	var e map[string]any
	if w.Code != 401 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e["jsonrpc"] != nil {
		t.Fatalf("dispatch: %d %s", w.Code, w.Body)
	}
	if _, ok := e["error"].(string); !ok {
		t.Fatalf("dispatch: %s", w.Body)
	}
	// The agent card is not JSON-RPC.
	r := httptest.NewRequest(http.MethodGet, "http://warden.test:8787/a2a/x/.well-known/agent-card.json", nil)
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	if rw.Code != 401 || strings.Contains(rw.Body.String(), `"jsonrpc"`) {
		t.Fatalf("agent card: %d %s", rw.Code, rw.Body)
	}
}

// TestRebindingRefusalIsJSONRPC: the DNS rebinding 403 on a JSON-RPC
// surface is a JSON-RPC error too.
func TestRebindingRefusalIsJSONRPC(t *testing.T) {
	var reached bool
	h := rebindingGuard(routes{mcpgate.Route(nil)}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	r := httptest.NewRequest(http.MethodPost, "http://evil.example/mcp/x", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"ping"}`))
	r = r.WithContext(contextWithLocalAddr(r))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if reached || w.Code != 403 || !strings.Contains(w.Body.String(), `"code":-31903`) || !strings.Contains(w.Body.String(), `"id":5`) {
		t.Fatalf("%d %s (reached %v)", w.Code, w.Body, reached)
	}
}

// contextWithLocalAddr is r's context as a loopback listener sets it.
func contextWithLocalAddr(r *http.Request) context.Context {
	return context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787})
}
