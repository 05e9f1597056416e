package main

import (
	"net/http"

	"github.com/wardenhq/warden/a2agate"
	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/console"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/internal/sealid"
	"github.com/wardenhq/warden/mcpgate"
	"github.com/wardenhq/warden/server"
)

// surfaceRoutes are the routes of serve's surfaces, each built from the
// Guardian and the config by its package's route constructor: a surface
// is its package and one line here (docs/architecture.md).
func (s *serving) surfaceRoutes() ([]server.Route, error) {
	gd, lim := s.gd, s.cfg.Limits
	ids, err := gatewayIDs(s.cfg, s.log) // sealed MCP session and A2A task ids
	if err != nil {
		return nil, err
	}
	acsGuardian, err := acsHandler(gd, s.be, s.cfg, s.logf)
	if err != nil {
		return nil, err
	}
	return []server.Route{
		aos.Route(aos.NewHandler(gd, aos.Options{Version: version, MaxBatch: lim.Batch, MaxResponse: int64(lim.ResponseBytes), Logf: s.logf})),
		acs.Route(acsGuardian),
		acs.SessionsRoute(acs.SessionHandler(s.be.ACS, s.be.Labels)),
		agbom.Route(agbom.Handler(s.be.AgBOM)),
		hooks.DispatchRoute(gd.Dispatcher()),
		hooks.CatalogRoute(gd.Hooks().CatalogHandler()),
		mcpgate.Route(s.mcpGateway(ids)),
		a2agate.Route(s.a2aGateway(ids)),
		fleet.InstancesRoute(s.fl.instances),
	}, nil
}

// mcpGateway is /mcp/{server}'s handler, nil without mcp: servers.
func (s *serving) mcpGateway(ids *sealid.Sealer) http.Handler {
	if len(s.cfg.MCP.Servers) == 0 {
		return nil
	}
	var pins *mcpgate.Pins // tool pinning, in the trace's store
	if bs := s.gd.AgBOMStore(); bs != nil {
		pins = &mcpgate.Pins{Store: bs, Logf: s.logf}
	}
	return mcpgate.NewHTTP(s.gd, s.cfg.MCP.Upstreams(), mcpgate.HTTPOptions{MaxBatch: s.cfg.Limits.Batch, Logf: s.logf, Pins: pins, Sessions: ids})
}

// a2aGateway is /a2a/{agent}'s handler, nil without a2a: agents.
func (s *serving) a2aGateway(ids *sealid.Sealer) http.Handler {
	if len(s.cfg.A2A.Agents) == 0 {
		return nil
	}
	return a2agate.New(s.gd, s.cfg.A2A.Upstreams(), a2agate.Options{Logf: s.logf, AgBOM: s.gd.AgBOMStore(), Tasks: ids})
}

// handler is the server: the surfaces' routes and its own (health, the
// APIs, metrics, the console), behind its guard and limits.
func (s *serving) handler(routes []server.Route) http.Handler {
	cfg, lim := s.cfg, s.cfg.Limits
	o := server.Options{
		Routes:        routes,
		Store:         s.be.Trace,
		Approvals:     s.gd.Approvals(),
		Unseal:        s.gd.Unseal(),
		Metrics:       s.metrics,
		Pprof:         s.pprof,
		RunsBytes:     int64(lim.RunsBytes),
		BodyTimeout:   lim.BodyTimeout,
		TenantStreams: lim.TenantStreams,
		Done:          s.shutdown,
		Security:      server.Security{Auth: &cfg.Auth, Origins: cfg.Origins, Sessions: s.sessions},
		Stats:         s.counts,
		Policies:      s.gd,
		Tenants:       cfg.TenantNames(),
		Trace:         s.traceHTTP,
		Readyz:        s.fl.readyz,
	}
	if in, ok := s.fl.instances.(console.Instances); ok { // the console's replicas
		o.Instances = in
	}
	return server.New(o)
}
