package a2agate

import (
	"net/http"
	"strings"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// Route is where h, the A2A gateway (New), is served: /a2a/{agent} and its
// agent card, every method, for a token with the decide scope; a decision
// surface that may hold a call for an approval. Its refusals are JSON-RPC
// errors but for the agent card's (a GET of a JSON document). h nil: not
// served (no a2a: agents configured).
func Route(h http.Handler) surface.Route {
	return surface.Route{Pattern: "/a2a/", Handler: h, Scope: auth.Decide, Decision: true, Hold: true, RPC: rpcPath}
}

// rpcPath reports whether a path under /a2a/ is an agent's JSON-RPC
// endpoint: it is not its agent card (/.well-known/).
func rpcPath(path string) bool { return !strings.Contains(path, "/.well-known/") }
