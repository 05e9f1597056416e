package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/fleet/registry"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/stream"
)

// fleetParts are serve's fleet pieces (docs/scaling.md): the decision
// stream's publisher (with stream.nats), the instance registry and
// /readyz. newFleet builds them before the server; start runs them once
// the listener's address is known; stop waits for them to end.
type fleetParts struct {
	readyz    *fleet.Readiness
	instances http.Handler // nil: the store keeps no registry
	pub       *stream.Publisher
	reg       atomic.Pointer[fleet.Registry]

	cfg   *config.Config
	store *backend.Backend
	gd    *guardian.Guardian
	log   *slog.Logger
	wg    sync.WaitGroup
}

func newFleet(cfg *config.Config, store *backend.Backend, gd *guardian.Guardian, metrics *server.Metrics, log *slog.Logger) (*fleetParts, error) {
	f := &fleetParts{cfg: cfg, store: store, gd: gd, log: log}
	logf := func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) }
	f.readyz = &fleet.Readiness{Store: store.Trace, Policies: func() bool { return gd.Policies() != nil }, Logf: logf}
	if n := cfg.Stream.NATS; n.Enabled() {
		if store.Cursors == nil {
			return nil, fmt.Errorf("stream.nats: the trace store keeps no stream cursor")
		}
		// A store only this process writes (SQLite) publishes on its own;
		// a shared one (PostgreSQL) takes turns under a lease, so that one
		// replica of the fleet publishes at a time.
		cs := struct {
			audit.Store
			audit.CursorStore
		}{store.Trace, store.Cursors}
		pub, err := stream.New(cs, stream.Options{URL: n.URL, Stream: n.Stream, Subject: n.Subject, Batch: n.Batch,
			Poll: n.Poll, Timeout: n.Timeout, Lease: store.Shared, Logf: logf})
		if err != nil {
			return nil, fmt.Errorf("stream.nats: %w", err)
		}
		f.pub = pub
		f.readyz.Stream = pub.Lag
		metrics.Registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "warden_stream_lag_records",
				Help: "Records in the trace not yet acknowledged by JetStream (counted up to 100,000)."},
				func() float64 { return float64(pub.Lag().Records) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "warden_stream_lag_seconds",
				Help: "Age of the oldest record not yet acknowledged by JetStream; 0 when none waits."},
				func() float64 { return pub.Lag().Seconds }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "warden_stream_connected",
				Help: "1 while the decision stream's NATS connection is up."},
				func() float64 { return b2f(pub.Lag().Connected) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "warden_stream_publishing",
				Help: "1 while this replica publishes the decision stream (it holds the lease, or needs none)."},
				func() float64 { return b2f(pub.Lag().Publishing) }),
		)
		metrics.AddCounterFunc("warden_stream_published_total", "Records this process published to JetStream and had acknowledged.",
			func() uint64 { return pub.Lag().Published })
	}
	if store.Registry != nil {
		f.instances = lateRegistry{&f.reg}
	}
	return f, nil
}

// lateRegistry serves the registry once start has made it (it needs the
// listener's address): GET /api/instances and the console's replicas.
type lateRegistry struct {
	p *atomic.Pointer[fleet.Registry]
}

var errRegistryStarting = errors.New("the instance registry is starting")

func (l lateRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g := l.p.Load(); g != nil {
		g.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(`{"error":"` + errRegistryStarting.Error() + `"}` + "\n"))
}

func (l lateRegistry) List(ctx context.Context) (fleet.Fleet, error) {
	if g := l.p.Load(); g != nil {
		return g.List(ctx)
	}
	return fleet.Fleet{}, errRegistryStarting
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// start registers this replica (id: instance.id, or hostname:port of
// addr, the listener's address) and starts the publisher, until ctx ends.
func (f *fleetParts) start(ctx context.Context, addr string) {
	id := f.cfg.Instance.ID
	if id == "" {
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(addr)
		id = net.JoinHostPort(host, port)
	}
	if is := f.store.Registry; is != nil {
		g := fleet.NewRegistry(is, registry.Instance{ID: id, Addr: addr, Version: version},
			fleet.RegistryOptions{Heartbeat: f.cfg.Instance.Heartbeat, Stale: f.cfg.Instance.Stale,
				Revision: func() string {
					if s := f.gd.Policies(); s != nil {
						return s.Revision()
					}
					return ""
				},
				Logf: func(format string, a ...any) { f.log.Info(fmt.Sprintf(format, a...)) }})
		f.reg.Store(g)
		f.wg.Add(1)
		go func() { defer f.wg.Done(); g.Run(ctx) }()
		f.log.Info("registered in the instance registry", "instance", id)
	}
	if f.pub != nil {
		f.pub.SetHolder(id)
		f.wg.Add(1)
		go func() { defer f.wg.Done(); _ = f.pub.Run(ctx) }()
	}
}

// stop waits for what start started to end (after its ctx is cancelled).
func (f *fleetParts) stop() { f.wg.Wait() }
