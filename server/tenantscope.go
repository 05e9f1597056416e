package server

import (
	"net/http"

	"github.com/wardenhq/warden"
)

// serverWide serves next, whose answer counts every tenant's decisions
// (GET /metrics: the Prometheus counters and latencies are not kept by
// tenant), to callers without a tenant only: a tenant's token gets a 403,
// as it would otherwise read the other tenants' rates and latencies. The
// console and the API scope what they show to the caller's tenant.
func serverWide(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := warden.PrincipalFrom(r.Context()); p.Tenant != "" {
			httpError(w, http.StatusForbidden, "forbidden: "+r.URL.Path+" counts every tenant's decisions: a token with a tenant ("+p.Tenant+") cannot read it")
			return
		}
		next.ServeHTTP(w, r)
	})
}
