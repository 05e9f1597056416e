package acs

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// Route is where h, an ACS Guardian (NewHandler), is served: /acs, every
// method, for a token with the decide scope; a decision surface whose
// refusals are JSON-RPC errors. h nil: not served.
func Route(h http.Handler) surface.Route {
	return surface.Route{Pattern: "/acs", Handler: h, Scope: auth.Decide, Decision: true, RPC: surface.AllRPC}
}

// SessionsRoute is where h, the ACS sessions API (SessionHandler), is
// served: GET /api/acs/sessions/{id}, for a token with the read scope.
// h nil: not served.
func SessionsRoute(h http.Handler) surface.Route {
	return surface.Route{Pattern: "GET /api/acs/sessions/{id}", Handler: h, Scope: auth.Read}
}
