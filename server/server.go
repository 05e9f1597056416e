// Package server assembles warden's HTTP surfaces on one listener: the
// surfaces' routes (Options.Routes: /aos, /acs, the gateways, ...), the
// admin API, health, metrics and the operator console, behind one guard.
package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/console"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/stats"
	"github.com/wardenhq/warden/surface"
	"github.com/wardenhq/warden/unseal"
)

// Route is a surface's route (surface.Route): where it is served, the
// scope it needs, whether it decides, holds or speaks JSON-RPC.
type Route = surface.Route

// Options are the parts the server routes to.
type Options struct {
	// Routes are the surfaces' routes (each surface package's constructor:
	// aos.Route, mcpgate.Route, ...). The server mounts each that has a
	// handler — a decision surface wrapped by Trace, one that holds made
	// holdable — and its guard asks of a request what the route claiming
	// it says, served or not (needScope, refuse).
	Routes []Route
	Store  audit.Store // GET /api/hooks/runs, /api/runs...
	// Approvals serves /api/approvals (nil: those routes answer 503).
	Approvals *approval.Manager
	// Unseal opens the sealed originals of redacted values for callers
	// that may see them (the unseal scope; approve for its approvals) and
	// records each unseal; nil: originals are not kept, everyone sees the
	// redacted form.
	Unseal  *unseal.Service
	Metrics *Metrics // GET /metrics
	Pprof   bool     // expose /debug/pprof/ (off by default)
	// RunsBytes bounds one /api/hooks/runs or /api/runs response
	// (limits.runs_bytes); 0 means DefaultRunsBytes.
	RunsBytes int64
	// BodyTimeout bounds reading a request body (limits.body_timeout); 0:
	// no bound of its own.
	BodyTimeout time.Duration
	// RunsStreams bounds the /api/runs/stream streams open at once (0:
	// DefaultRunsStreams); RunsPoll is how often their feed reads the
	// store (0: DefaultRunsPoll).
	RunsStreams int
	RunsPoll    time.Duration
	// TenantStreams bounds the runs streams, and the approvals streams,
	// the callers of one tenant hold open at once (limits.tenant_streams;
	// 0: DefaultTenantStreams).
	TenantStreams int
	// Done, when closed, ends the open streams (the server is shutting
	// down: http.Server.Shutdown waits for handlers, and a stream's would
	// otherwise wait for its client). nil: never.
	Done <-chan struct{}
	// Security is checked before any surface sees a request (guard.go).
	Security Security
	// Stats, Policies, Tenants and Instances are what the console shows
	// besides the trace and the approvals (nil: the pages say so).
	Stats     *stats.Observer
	Policies  console.Policies
	Tenants   []string
	Instances console.Instances
	// Trace wraps each decision surface (Route.Decision) given its
	// pattern, e.g. otelx's Middleware, which continues the caller's W3C
	// traceparent; nil wraps none.
	Trace func(route string, h http.Handler) http.Handler
	// Readyz serves GET /readyz (open, like /healthz: a balancer's probe);
	// nil: a fleet.Readiness of Store alone.
	Readyz *fleet.Readiness
}

// New returns the HTTP handler serving every surface.
func New(o Options) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range o.Routes {
		if rt.Handler != nil {
			mux.Handle(rt.Pattern, o.mount(rt))
		}
	}
	o.serveOwn(mux)
	rs := routes(o.Routes)
	// Outermost: the body deadline holds whatever the path and whoever
	// answers, and a body left unread is not read on (bodyDeadline).
	return bodyDeadline(rebindingGuard(rs, guard(o.Security, rs, guardStreams(o.Security, o.TenantStreams, mux))), o.BodyTimeout)
}

// mount is how the server serves rt's handler: a decision surface wrapped
// by o.Trace, one that holds made holdable.
func (o *Options) mount(rt Route) http.Handler {
	h := rt.Handler
	if rt.Decision && o.Trace != nil {
		h = o.Trace(rt.Pattern, h)
	}
	if rt.Hold {
		h = holdable(h)
	}
	return h
}

// serveOwn adds the server's own routes to mux: health, readiness,
// metrics, the runs and approvals APIs, the erasure of a session's sealed
// originals (POST /api/sessions/{id}/forget), the event catalog, the console
// and, with o.Pprof, the profiler.
func (o *Options) serveOwn(mux *http.ServeMux) {
	readyz := o.Readyz
	if readyz == nil {
		readyz = &fleet.Readiness{Store: o.Store}
	}
	mux.Handle("GET /readyz", readyz)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	if o.Metrics != nil {
		mux.Handle("GET /metrics", serverWide(promhttp.HandlerFor(o.Metrics.Registry, promhttp.HandlerOpts{})))
	}
	mux.HandleFunc("GET /api/hooks/runs", runsHandler(o.Store, o.Unseal, o.RunsBytes))
	mux.HandleFunc("GET /api/runs", apiRunsHandler(o.Store, o.Unseal, o.RunsBytes))
	mux.HandleFunc("GET /api/runs/{id}", apiRunHandler(o.Store, o.Unseal))
	mux.HandleFunc("GET /api/runs/stream", streamHandler(newRunsFeed(o.Store, o.RunsPoll, o.RunsStreams, o.Done)))
	mux.HandleFunc("GET /api/hooks/events", eventsHandler)
	approvalsRoutes(mux, o.Approvals, originals{store: o.Store, svc: o.Unseal})
	mux.HandleFunc("POST /api/sessions/{id}/forget", forgetHandler(o.Unseal))
	con := newConsole(o)
	for _, p := range console.Routes {
		mux.Handle(p, con)
	}
	if o.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	}
}

// holdable lets a surface that holds asked calls (MCP, A2A, dispatch)
// extend its write deadline past the server's write timeout while it waits
// for an approval (approval.ExtendHold).
func holdable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		ctx := approval.WithHoldDeadline(r.Context(), func(until time.Time) { _ = rc.SetWriteDeadline(until) })
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// rebindingGuard refuses requests that arrived on a loopback address with a
// Host that is not a loopback name: a web page that rebinds its own domain to
// 127.0.0.1 must not reach warden's endpoints (/aos, /mcp, dispatch) from a
// browser. This is the DNS rebinding protection the MCP security best
// practices ask of local servers, applied to every surface.
func rebindingGuard(rs routes, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil &&
			isLoopback(la.String()) && !isLoopback(r.Host) {
			msg := fmt.Sprintf("forbidden: Host %q is not a loopback name (DNS rebinding protection)", r.Host)
			if rs.jsonRPC(r) {
				refuse(w, r, true, http.StatusForbidden, msg)
			} else {
				closeUnread(w, r)
				http.Error(w, msg, http.StatusForbidden)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a host or host:port names the loopback
// interface (localhost, 127.0.0.0/8, ::1).
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newConsole is the operator console over o's store, approvals, stats and
// policies, with sign-in when o.Security has sessions.
func newConsole(o *Options) *console.Console {
	co := console.Options{Store: o.Store, Stats: o.Stats, Policies: o.Policies, Tenants: o.Tenants, Unseal: o.Unseal}
	if o.Store != nil {
		co.RunsStream = "/api/runs/stream"
	}
	if o.Approvals != nil {
		co.Approvals = o.Approvals
	}
	if o.Instances != nil {
		co.Instances = o.Instances
	}
	if o.Security.Auth.Enabled() {
		co.Auth, co.Sessions = o.Security.Auth, o.Security.Sessions
	}
	return console.New(co)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
