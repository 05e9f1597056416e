package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wardenhq/warden/a2agate"
	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/mcpgate"
)

// scopeOf is what the guard asks of a request with every surface
// configured: its scope, whether it is open, and whether a refusal of it
// is a JSON-RPC error.
func scopeOf(t *testing.T, method, path string) (auth.Scope, bool, bool) {
	t.Helper()
	r := httptest.NewRequest(method, "http://warden.test:8787/", nil)
	r.URL.Path = path
	stub := http.NotFoundHandler()
	rs := routes{aos.Route(stub), acs.Route(stub), acs.SessionsRoute(stub), agbom.Route(stub), hooks.DispatchRoute(stub),
		hooks.CatalogRoute(stub), mcpgate.Route(stub), a2agate.Route(stub), fleet.InstancesRoute(stub)}
	need, open := needScope(rs, r)
	return need, open, rs.jsonRPC(r)
}

// TestNeedScope is the guard's table of what each request needs (the
// surfaces' routes and the server's own paths, docs/security.md): the
// scope, open for none, and the refusal's shape. Paths are taken as sent.
func TestNeedScope(t *testing.T) {
	const open = auth.Scope(0)
	tests := []struct {
		method, path string
		need         auth.Scope // open: no credential
		rpc          bool
	}{
		{"GET", "/healthz", open, false},
		{"POST", "/healthz", open, false},
		{"GET", "/readyz", open, false},
		{"DELETE", "/readyz", open, false},
		{"GET", "/login", open, false},
		{"HEAD", "/login", open, false},
		{"POST", "/login", auth.Admin, false},
		{"GET", "/static/app.js", open, false},
		{"POST", "/api/session", open, false},
		{"POST", "/api/session/logout", open, false},
		{"GET", "/api/session", auth.Read, false},
		{"POST", "/aos", auth.Decide, true},
		{"GET", "/aos", auth.Decide, true},
		{"POST", "/aos/", auth.Admin, false},
		{"POST", "/acs", auth.Decide, true},
		{"PUT", "/acs", auth.Decide, true},
		{"POST", "/mcp/x", auth.Decide, true},
		{"GET", "/mcp/x", auth.Decide, true},
		{"DELETE", "/mcp/x", auth.Decide, true},
		{"POST", "/mcp/", auth.Decide, true},
		{"POST", "/mcp/../api/x", auth.Decide, true},
		{"GET", "/mcp", auth.Admin, false},
		{"POST", "/mcpx", auth.Admin, false},
		{"POST", "/a2a/x", auth.Decide, true},
		{"POST", "/a2a/x/", auth.Decide, true},
		{"GET", "/a2a/x/.well-known/agent.json", auth.Decide, false},
		{"GET", "/a2a/x/.well-known/agent-card.json", auth.Decide, false},
		{"GET", "/a2a", auth.Admin, false},
		{"POST", "/api/hooks/dispatch", auth.Decide, false},
		{"GET", "/api/hooks/dispatch", auth.Read, false},
		{"HEAD", "/api/hooks/dispatch", auth.Read, false},
		{"DELETE", "/api/hooks/dispatch", auth.Admin, false},
		{"POST", "/api/hooks/dispatch/", auth.Admin, false},
		{"GET", "/api/hooks/catalog", auth.Read, false},
		{"POST", "/api/hooks/catalog", auth.Admin, false},
		{"GET", "/api/hooks/runs", auth.Read, false},
		{"GET", "/api/hooks/events", auth.Read, false},
		{"GET", "/api/runs", auth.Read, false},
		{"GET", "/api/runs/r1", auth.Read, false},
		{"GET", "/api/runs/stream", auth.Read, false},
		{"GET", "/api/agbom", auth.Read, false},
		{"HEAD", "/api/agbom", auth.Read, false},
		{"POST", "/api/agbom", auth.Admin, false},
		{"GET", "/api/acs/sessions/s1", auth.Read, false},
		{"GET", "/api/acs/sessions/s1/x", auth.Read, false},
		{"DELETE", "/api/acs/sessions/s1", auth.Admin, false},
		{"GET", "/api/instances", auth.Read, false},
		{"POST", "/api/instances", auth.Admin, false},
		{"GET", "/api/approvals", auth.Read, false},
		{"GET", "/api/approvals/ap-1", auth.Read, false},
		{"GET", "/api/approvals/stream", auth.Read, false},
		{"POST", "/api/approvals/ap-1", auth.Approve, false},
		{"POST", "/api/approvals", auth.Admin, false},
		{"POST", "/api/sessions/s1/forget", auth.Admin, false},
		{"GET", "/api/nothing", auth.Read, false},
		{"POST", "/api/nothing", auth.Admin, false},
		{"GET", "/", auth.Read, false},
		{"GET", "/decisions", auth.Read, false},
		{"GET", "/decisions/r1/x", auth.Read, false},
		{"GET", "/approvals/ap-1", auth.Read, false},
		{"GET", "/overview", auth.Read, false},
		{"GET", "/metrics", auth.Read, false},
		{"POST", "/metrics", auth.Admin, false},
		{"GET", "/debug/pprof/", auth.Admin, false},
		{"GET", "/nothing", auth.Admin, false},
		{"OPTIONS", "/aos", auth.Decide, true},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			need, isOpen, rpc := scopeOf(t, tt.method, tt.path)
			if isOpen != (tt.need == open) || !isOpen && need != tt.need || rpc != tt.rpc {
				t.Errorf("need %v (open %v), JSON-RPC %v; want %v, JSON-RPC %v", need, isOpen, rpc, tt.need, tt.rpc)
			}
		})
	}
}
