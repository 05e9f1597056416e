package hooks

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// DispatchRoute is where h, hook dispatch over HTTP (a Dispatcher), is
// served: /api/hooks/dispatch, a POST of which needs the decide scope (a
// GET, which h answers with 405, needs read as any under /api/); a
// decision surface that may hold a call for an approval. h nil: not
// served.
func DispatchRoute(h http.Handler) surface.Route {
	return surface.Route{Pattern: "/api/hooks/dispatch", Handler: h, Scope: auth.Decide,
		ScopeMethods: []string{http.MethodPost}, Decision: true, Hold: true}
}

// CatalogRoute is where h, the hook catalog (Router.CatalogHandler), is
// served: GET /api/hooks/catalog, for a token with the read scope. h nil:
// not served.
func CatalogRoute(h http.Handler) surface.Route {
	return surface.Route{Pattern: "GET /api/hooks/catalog", Handler: h, Scope: auth.Read}
}
