// Package surface describes how a surface is mounted on warden's listener:
// its routes, and what the server asks of a request before the surface
// sees it (docs/security.md). Each surface package offers a constructor of
// its routes (aos.Route, mcpgate.Route, ...); `warden serve` lists them in
// one table and the server mounts them (docs/architecture.md).
package surface

import (
	"net/http"
	"slices"
	"strings"

	"github.com/wardenhq/warden/auth"
)

// Route is one route of a surface.
type Route struct {
	// Pattern is where it is served, an http.ServeMux pattern without a
	// host: "[METHOD ]/path", a path ending in "/" serving the subtree
	// below it, {name} standing for one segment ({name...} for the rest,
	// {$} for the end).
	Pattern string
	// Handler serves the route; nil: the surface is not configured and the
	// path is not served (404). The guard refuses a request to it all the
	// same (Scope, RPC), whether the surface is configured or not.
	Handler http.Handler
	// Scope is what a token needs for the route, with auth on.
	Scope auth.Scope
	// ScopeMethods, when set, are the methods Scope is asked of. A request
	// of another method needs what the server asks of a path no route
	// claims (read for a GET or HEAD under /api/, admin otherwise); the
	// handler answers it (with a 405).
	ScopeMethods []string
	// Decision marks a decision surface: the server's trace middleware
	// wraps it, its span named by Pattern.
	Decision bool
	// Hold lets the handler hold a call past the server's write timeout
	// while an approval is asked (approval.WithHoldDeadline).
	Hold bool
	// RPC reports whether a request to path speaks JSON-RPC, so that the
	// guard's refusal of it is a JSON-RPC error response as well as an HTTP
	// status; nil: no path of the route does.
	RPC func(path string) bool
}

// AllRPC is Route.RPC for a route every path of which speaks JSON-RPC.
func AllRPC(string) bool { return true }

// Claims reports whether a request of method for path (as sent, not
// cleaned) is the route's, as an http.ServeMux matches Pattern: a pattern
// naming GET claims HEAD too.
func (rt Route) Claims(method, path string) bool {
	m, p, ok := strings.Cut(rt.Pattern, " ")
	if !ok {
		m, p = "", rt.Pattern
	}
	if m != "" && m != method && !(m == http.MethodGet && method == http.MethodHead) {
		return false
	}
	return matchPath(strings.TrimLeft(p, " \t"), path)
}

// Needs returns the scope a request of method for path needs, and whether
// the route asks it: the route claims the request and ScopeMethods, if
// set, hold method.
func (rt Route) Needs(method, path string) (auth.Scope, bool) {
	if !rt.Claims(method, path) || len(rt.ScopeMethods) > 0 && !slices.Contains(rt.ScopeMethods, method) {
		return 0, false
	}
	return rt.Scope, true
}

// JSONRPC reports whether the route claims a request of method for path
// and that request speaks JSON-RPC.
func (rt Route) JSONRPC(method, path string) bool {
	return rt.RPC != nil && rt.Claims(method, path) && rt.RPC(path)
}

// matchPath reports whether path matches a pattern's path, segment by
// segment: a literal segment equal, {name} any one non-empty segment,
// {name...} the rest, {$} the end after a trailing slash, and a pattern
// ending in "/" every path below it.
func matchPath(pat, path string) bool {
	if !strings.HasPrefix(pat, "/") || !strings.HasPrefix(path, "/") {
		return false
	}
	pat, path = pat[1:], path[1:]
	if pat == "" { // "/": every path
		return true
	}
	for {
		if pat == "{$}" {
			return path == ""
		}
		seg, rest, more := strings.Cut(pat, "/")
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "...}") {
			return true
		}
		ps, prest, pmore := strings.Cut(path, "/")
		switch {
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			if ps == "" {
				return false
			}
		case seg != ps:
			return false
		}
		if !more { // the pattern's last segment, without a trailing slash
			return !pmore
		}
		if !pmore {
			return false
		}
		if rest == "" { // a trailing slash: the subtree
			return true
		}
		pat, path = rest, prest
	}
}
