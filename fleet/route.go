package fleet

import (
	"net/http"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/surface"
)

// InstancesRoute is where h, the instance registry's API (a Registry), is
// served: GET /api/instances, for a token with the read scope. h nil: not
// served (the store keeps no registry).
func InstancesRoute(h http.Handler) surface.Route {
	return surface.Route{Pattern: "GET /api/instances", Handler: h, Scope: auth.Read}
}
