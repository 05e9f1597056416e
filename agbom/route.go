package agbom

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// Route is where h, the AgBOM API (Handler), is served: GET /api/agbom,
// for a token with the read scope. h nil: not served.
func Route(h http.Handler) surface.Route {
	return surface.Route{Pattern: "GET /api/agbom", Handler: h, Scope: auth.Read}
}
