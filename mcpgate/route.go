package mcpgate

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// Route is where h, the MCP gateway (NewHTTP), is served: /mcp/{server},
// every method, for a token with the decide scope; a decision surface that
// may hold a call for an approval, its refusals JSON-RPC errors. h nil:
// not served (no mcp: servers configured).
func Route(h http.Handler) surface.Route {
	return surface.Route{Pattern: "/mcp/", Handler: h, Scope: auth.Decide, Decision: true, Hold: true, RPC: surface.AllRPC}
}
