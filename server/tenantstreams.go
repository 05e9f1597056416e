package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
)

// DefaultTenantStreams bounds the streams of one kind (the runs stream,
// the approvals stream) that the callers of one tenant may hold open at
// once (limits.tenant_streams), beside the bound of all streams of that
// kind (DefaultRunsStreams, approval.MaxSubscribers: 64 each), so that one
// tenant cannot take every slot.
const DefaultTenantStreams = 16

// tenantStreamPaths are the streams tenantStreams bounds, by path.
var tenantStreamPaths = map[string]string{
	"/api/runs/stream":      "runs",
	"/api/approvals/stream": "approval",
}

// tenantStreams bounds the streams a tenant holds open, per kind. Callers
// without a tenant (auth off, a token or client with no tenant: the
// operator's) count toward the global bounds only.
type tenantStreams struct {
	max  int
	mu   sync.Mutex
	open map[[2]string]int // {kind, tenant} → streams open
}

// guardStreams sits behind the guard (which puts the caller's tenant and
// a recheck of its credential in the context) in front of the streams
// (GET /api/runs/stream, GET /api/approvals/stream). It refuses the stream
// of a tenant that already holds max streams of that kind open: 503 with
// Retry-After, as past the global bound. And it ends a stream whose
// credential a reload removed or changed (endRevoked).
func guardStreams(sec Security, max int, next http.Handler) http.Handler {
	if max <= 0 {
		max = DefaultTenantStreams
	}
	s := &tenantStreams{max: max, open: map[[2]string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, ok := tenantStreamPaths[r.URL.Path]
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		if still, ok := r.Context().Value(recheckKey{}).(func() bool); ok && sec.Auth != nil {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			go endRevoked(ctx, cancel, sec.Auth, still)
			r = r.WithContext(ctx)
		}
		tenant := warden.PrincipalFrom(r.Context()).Tenant
		if tenant == "" {
			next.ServeHTTP(w, r)
			return
		}
		key := [2]string{kind, tenant}
		s.mu.Lock()
		if s.open[key] >= s.max {
			s.mu.Unlock()
			w.Header().Set("Retry-After", "5")
			httpError(w, http.StatusServiceUnavailable, fmt.Sprintf(
				"too many %s streams open for tenant %s (%d, limits.tenant_streams); try again later", kind, tenant, s.max))
			return
		}
		s.open[key]++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.open[key]--; s.open[key] == 0 {
				delete(s.open, key)
			}
			s.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// endRevoked cancels a stream's context once a reload of a (the
// credentials in force) leaves its credential out (still reports false),
// so the stream ends as a new request with it would be refused.
func endRevoked(ctx context.Context, cancel context.CancelFunc, a *auth.Config, still func() bool) {
	for {
		changed := a.Changed()
		if !still() {
			cancel()
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}
