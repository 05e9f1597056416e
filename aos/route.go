package aos

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// Route is where h, an AOS endpoint (NewHandler), is served: /aos, every
// method, for a token with the decide scope; a decision surface whose
// refusals are JSON-RPC errors. h nil: not served.
func Route(h http.Handler) surface.Route {
	return surface.Route{Pattern: "/aos", Handler: h, Scope: auth.Decide, Decision: true, RPC: surface.AllRPC}
}
