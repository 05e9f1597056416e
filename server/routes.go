package server

import (
	"net/http"
	"strings"

	"github.com/wardenhq/warden/auth"
)

// routes are the surfaces' routes as the guard reads them: what a request
// needs and how it is refused come from the route that claims it.
type routes []Route

// claiming is the route that claims r, or nil: the most specific of those
// that do (the longest path in its pattern, then one naming a method), as
// http.ServeMux picks the handler.
func (rs routes) claiming(r *http.Request) *Route {
	var best *Route
	bestLen, bestMethod := -1, false
	for i := range rs {
		rt := &rs[i]
		if !rt.Claims(r.Method, r.URL.Path) {
			continue
		}
		m, p, named := strings.Cut(rt.Pattern, " ")
		if !named {
			p = m
		}
		if len(p) > bestLen || len(p) == bestLen && named && !bestMethod {
			best, bestLen, bestMethod = rt, len(p), named
		}
	}
	return best
}

// need is the scope the route claiming r asks of it; ok false: no route
// claims r, or its route asks nothing of r's method (Route.ScopeMethods).
func (rs routes) need(r *http.Request) (need auth.Scope, ok bool) {
	if rt := rs.claiming(r); rt != nil {
		return rt.Needs(r.Method, r.URL.Path)
	}
	return 0, false
}

// jsonRPC reports whether r speaks JSON-RPC (its route's RPC), so that a
// refusal of it is a JSON-RPC error response.
func (rs routes) jsonRPC(r *http.Request) bool {
	rt := rs.claiming(r)
	return rt != nil && rt.JSONRPC(r.Method, r.URL.Path)
}
