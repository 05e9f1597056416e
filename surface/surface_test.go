package surface

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
)

func TestClaims(t *testing.T) {
	tests := []struct {
		pattern, method, path string
		want                  bool
	}{
		{"/aos", "POST", "/aos", true},
		{"/aos", "GET", "/aos", true},
		{"/aos", "POST", "/aos/", false},
		{"/aos", "POST", "/aosx", false},
		{"/mcp/", "DELETE", "/mcp/x", true},
		{"/mcp/", "POST", "/mcp/", true},
		{"/mcp/", "POST", "/mcp/a/b/c", true},
		{"/mcp/", "POST", "/mcp/../api/x", true}, // as sent: the mux redirects it
		{"/mcp/", "GET", "/mcp", false},
		{"/mcp/", "GET", "//mcp/x", false},
		{"/mcp/", "GET", "/mcpx/y", false},
		{"GET /api/agbom", "GET", "/api/agbom", true},
		{"GET /api/agbom", "HEAD", "/api/agbom", true},
		{"GET /api/agbom", "POST", "/api/agbom", false},
		{"GET /api/agbom", "GET", "/api/agbom/x", false},
		{"GET /api/acs/sessions/{id}", "GET", "/api/acs/sessions/s1", true},
		{"GET /api/acs/sessions/{id}", "GET", "/api/acs/sessions/", false},
		{"GET /api/acs/sessions/{id}", "GET", "/api/acs/sessions/s1/x", false},
		{"GET /api/acs/sessions/{id}", "GET", "/api/acs/sessions", false},
		{"/files/{rest...}", "GET", "/files/a/b", true},
		{"/files/{rest...}", "GET", "/files/", true},
		{"/files/{rest...}", "GET", "/files", false},
		{"GET /{$}", "GET", "/", true},
		{"GET /{$}", "GET", "/x", false},
		{"/a/{$}", "GET", "/a/", true},
		{"/a/{$}", "GET", "/a/b", false},
		{"/", "PUT", "/anything/at/all", true},
		{"example.com/aos", "POST", "/aos", false}, // no host patterns
		{"/aos", "POST", "aos", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.method+" "+tt.path, func(t *testing.T) {
			if got := (Route{Pattern: tt.pattern}).Claims(tt.method, tt.path); got != tt.want {
				t.Errorf("Claims = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNeedsAndJSONRPC(t *testing.T) {
	dispatch := Route{Pattern: "/api/hooks/dispatch", Scope: auth.Decide, ScopeMethods: []string{http.MethodPost}}
	card := func(p string) bool { return !strings.Contains(p, "/.well-known/") }
	a2a := Route{Pattern: "/a2a/", Scope: auth.Decide, RPC: card}
	tests := []struct {
		name         string
		rt           Route
		method, path string
		scope        auth.Scope
		asked, rpc   bool
	}{
		{"dispatch POST", dispatch, "POST", "/api/hooks/dispatch", auth.Decide, true, false},
		{"dispatch GET", dispatch, "GET", "/api/hooks/dispatch", 0, false, false},
		{"dispatch elsewhere", dispatch, "POST", "/api/hooks/runs", 0, false, false},
		{"a2a call", a2a, "POST", "/a2a/x", auth.Decide, true, true},
		{"a2a card", a2a, "GET", "/a2a/x/.well-known/agent.json", auth.Decide, true, false},
		{"a2a elsewhere", a2a, "POST", "/aos", 0, false, false},
		{"all RPC", Route{Pattern: "/aos", Scope: auth.Decide, RPC: AllRPC}, "PUT", "/aos", auth.Decide, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope, asked := tt.rt.Needs(tt.method, tt.path)
			if scope != tt.scope || asked != tt.asked {
				t.Errorf("Needs = %v, %v; want %v, %v", scope, asked, tt.scope, tt.asked)
			}
			if rpc := tt.rt.JSONRPC(tt.method, tt.path); rpc != tt.rpc {
				t.Errorf("JSONRPC = %v, want %v", rpc, tt.rpc)
			}
		})
	}
}
