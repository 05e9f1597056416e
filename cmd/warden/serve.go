package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/pipeline"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/stats"
)

// serveGCPercent is the GC target of `warden serve` unless GOGC is set.
const serveGCPercent = 400

// serveMemoryLimit is the Go runtime's soft memory limit for `warden serve`
// unless GOMEMLIMIT is set. GOGC=400 lets the heap grow to five times its
// live size between collections: cheap at a few connections, but at 1,024
// connections the in-flight garbage took the process to ~300 MB. Under the
// limit the collector runs earlier instead; it is soft (the runtime caps the
// collector's CPU at about half when the live heap itself nears it, rather
// than fail), so a larger live heap still works, only with more GC.
// GOMEMLIMIT=off (or any value) overrides it.
const serveMemoryLimit = 192 << 20

// shutdownGrace bounds how long in-flight requests may take on SIGINT/SIGTERM.
const shutdownGrace = 30 * time.Second

// fdReserve is the file descriptors kept for what is not a client
// connection: the trace, upstream and hook connections, hook pipes.
const fdReserve = 256

// fdLimit returns the soft limit of open files (Go raises it to the hard
// limit at start-up).
func fdLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}

// cmdServe is `warden serve`: its steps, in order, are parseServe (the
// flags and the config), openStore, buildGuardian, surfaceRoutes and
// handler (surfaces.go), listen and serve.
func cmdServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	s, code, ok := parseServe(args, stderr)
	if !ok {
		return code
	}
	tuneRuntime()
	s.log = slog.New(slog.NewTextHandler(stderr, nil))
	if err := s.openStore(); err != nil {
		return serveFailed(stderr, err)
	}
	defer s.closeNotifier() // on early returns; after a shutdown this returns at once
	h, err := s.build()
	if err == nil {
		err = s.listen()
	}
	if err != nil {
		s.be.Trace.Close()
		return serveFailed(stderr, err)
	}
	return s.serve(h, stdout, stderr)
}

// serving is one `warden serve`: its flags, and what its steps build.
type serving struct {
	addr, data, storeURL      string
	loopback                  bool // addr serves the loopback interface only
	pprof, traceLog, insecure bool
	opts                      guardian.Options
	cfg                       *config.Config
	reloadCfg                 *configReload // what SIGHUP reloads besides the policies

	log       *slog.Logger
	metrics   *server.Metrics
	counts    *stats.Observer // the console's counts (the overview, the policies' matches)
	be        *backend.Backend
	notifier  *notify.Notifier
	gd        *guardian.Guardian
	fl        *fleetParts                             // the decision stream, the instance registry, /readyz
	traceHTTP func(string, http.Handler) http.Handler // otel: spans of the decision surfaces
	sessions  *auth.Sessions                          // console sign-in, with auth on
	shutdown  chan struct{}                           // closed as shutdown begins: ends the runs streams
	ln        *server.ConnLimiter                     // the TCP listener, at most limits.connections open
	served    net.Listener                            // ln, or TLS over it
	scheme    string                                  // http or https
}

// asIs is an error printed as it is, without fail's "warden: " (the
// config's file:line errors, the Guardian's).
type asIs struct{ error }

// serveFailed prints why serve could not start and returns its exit code.
func serveFailed(stderr io.Writer, err error) int {
	var a asIs
	if errors.As(err, &a) {
		fmt.Fprintln(stderr, a.error)
		return exitError
	}
	return fail(stderr, "%v", err)
}

// parseServe reads serve's flags and its config, and refuses a
// non-loopback address without authentication (unless --insecure).
func parseServe(args []string, stderr io.Writer) (*serving, int, bool) {
	fs := newFlags("serve", stderr)
	gf := addGuardianFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address (port 0 picks a free port)")
	data := fs.String("data", "./warden-data", "data directory (SQLite trace; with --store, the console's session key)")
	storeURL := addStoreFlag(fs)
	pprof := fs.Bool("pprof", false, "expose /debug/pprof/ (profiling; keep off in production)")
	traceLog := fs.Bool("trace-log", false, "answer once a decision is in the SQLite trace's segment log (DATA/trace.log), its rows indexed behind the answers (experimental; see the sqlite package documentation)")
	insecure := fs.Bool("insecure", false, "serve a non-loopback address without auth.tokens (anyone who reaches it can decide, dispatch and read the trace)")
	var shadow multiFlag
	fs.Var(&shadow, "shadow-policy", "policy file or directory of a shadow set: with the built-in pack, a candidate set decided beside the live one, recorded with mode shadow, never applied (repeatable; added to the config's shadow:)")
	if code, ok := parseFlags(fs, args); !ok {
		return nil, code, false
	}
	s := &serving{addr: *addr, data: *data, storeURL: *storeURL, pprof: *pprof, traceLog: *traceLog, insecure: *insecure,
		opts: gf.options(), shutdown: make(chan struct{})}
	s.opts.Shadow = shadow
	s.cfg = config.Default()
	if s.opts.ConfigFile != "" {
		c, err := config.Load(s.opts.ConfigFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return nil, exitError, false
		}
		s.cfg = c
	}
	s.reloadCfg = newConfigReload(s.opts.ConfigFile, s.cfg)
	s.opts.Config, s.opts.ConfigFile = s.cfg, ""
	if s.storeURL == "" {
		s.storeURL = s.cfg.Store
	}
	if err := checkStoreFlag(s.storeURL); err != nil {
		return nil, fail(stderr, "%v", err), false
	}
	s.loopback = loopbackAddr(s.addr)
	if !s.cfg.Auth.Enabled() && !s.loopback && !s.insecure {
		return nil, fail(stderr, "refusing to serve %s without authentication: configure auth.tokens in --config (see 'warden token new'), or pass --insecure", s.addr), false
	}
	return s, exitOK, true
}

// tuneRuntime sets serve's GC target and soft memory limit unless GOGC
// and GOMEMLIMIT set them.
func tuneRuntime() {
	if os.Getenv("GOGC") == "" {
		// The live heap is small (compiled policies, in-flight requests), so
		// trading some memory for less GC work is cheap: measured ~15% more
		// decisions per second under the bench/ load. GOGC overrides it.
		debug.SetGCPercent(serveGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
}

// logf logs at INFO, for the packages that take a printf-style logger.
func (s *serving) logf(format string, a ...any) { s.log.Info(fmt.Sprintf(format, a...)) }

// openStore opens the trace and the state it keeps (--store, the
// config's store:, else SQLite under --data), its batches counted in the
// metrics.
func (s *serving) openStore() error {
	s.metrics = server.NewMetrics()
	be, _, err := openServeStore(s.storeURL, s.data, s.metrics.ObserveBatch, s.traceLog)
	if err != nil {
		return err
	}
	s.be = be // closing be.Trace closes be
	return nil
}

// build makes the Guardian and the handler of every route: the steps
// between opening the store and listening.
func (s *serving) build() (http.Handler, error) {
	if err := s.buildGuardian(); err != nil {
		return nil, err
	}
	routes, err := s.surfaceRoutes()
	if err != nil {
		return nil, err
	}
	return s.handler(routes), nil
}

// buildGuardian opens the Guardian over the store, with its notifier and
// observers, and what serves beside it: the fleet's parts, the exporters'
// drop counters, the console's sessions.
func (s *serving) buildGuardian() error {
	cfg := s.cfg
	s.counts = stats.New(nil)
	s.opts.Backend, s.opts.Observer, s.opts.Logger = s.be, pipeline.Observers{s.metrics, s.counts}, s.log
	s.opts.KeyDir = s.data // a PostgreSQL trace's redaction key (trace.key)
	s.opts.OnAsyncRun, s.opts.OnAsyncDrop = s.metrics.AsyncRun, s.metrics.AsyncDrop
	if cfg.Approvals.URL == "" {
		// Notification links point at this server unless approvals.url says
		// where people reach it.
		if _, port, err := net.SplitHostPort(s.addr); err == nil && port != "0" {
			sch := "http"
			if cfg.TLS.Enabled() {
				sch = "https"
			}
			cfg.Approvals.URL = sch + "://" + s.addr
		}
	}
	s.notifier = notify.New(cfg.Approvals.Notify.Targets(), notify.Options{OnResult: func(r notify.Result) {
		if r.Err != nil {
			// The target's host only: a Slack webhook's path is its secret.
			s.log.Warn("approval notification failed", "approval", r.ApprovalID, "target", targetHost(r.Target),
				"attempt", r.Attempt, "final", r.Final, "status", r.Status, "err", r.Err)
		}
	}})
	s.opts.Notifier = s.notifier
	gd, err := guardian.Open(s.opts)
	if err != nil {
		return asIs{err}
	}
	s.gd = gd
	if s.fl, err = newFleet(cfg, s.be, gd, s.metrics, s.log); err != nil {
		return err
	}
	s.countDrops()
	if cfg.Auth.Enabled() {
		key, err := auth.LoadSessionKey(s.data)
		if err != nil {
			return fmt.Errorf("the console's session key: %w", err)
		}
		s.sessions = auth.NewSessions(key, &cfg.Auth)
	}
	if s.insecure {
		if cfg.Auth.Enabled() || s.loopback {
			s.log.Warn("--insecure has no effect here: the surfaces are protected by auth.tokens or served on loopback only", "addr", s.addr)
		} else {
			s.log.Warn("serving WITHOUT authentication on a non-loopback address (--insecure): anyone who can reach it can decide, dispatch and read the trace; configure auth.tokens", "addr", s.addr)
		}
	}
	return nil
}

// countDrops takes the OpenTelemetry exporter's middleware and puts what
// it and the OCSF writer drop in the metrics.
func (s *serving) countDrops() {
	if e := s.gd.OTel(); e != nil {
		s.traceHTTP = e.Middleware
		s.metrics.AddCounterFunc("warden_otel_decisions_dropped_total", "Decisions not made into spans because the otel queue was full.",
			func() uint64 { d, _ := e.Dropped(); return d })
		s.metrics.AddCounterFunc("warden_otel_spans_dropped_total", "Spans not exported because the otel export queue was full.",
			func() uint64 { _, sp := e.Dropped(); return sp })
	}
	if o := s.gd.OCSF(); o != nil {
		s.metrics.AddCounterFunc("warden_ocsf_dropped_total", "Decisions not written to trace.ocsf_file because its queue was full.", o.Dropped)
	}
}

// listen opens the listener: at most limits.connections open, TLS when
// the config has tls:.
func (s *serving) listen() error {
	lim := s.cfg.Limits
	inner, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.addr, err)
	}
	// At most limits.connections open: past it the oldest connection that
	// is not serving a request is closed, so a flood of slow connections
	// neither exhausts file descriptors nor keeps /healthz out.
	s.ln = server.LimitConns(inner, lim.Connections)
	s.served, s.scheme = s.ln, "http"
	if s.cfg.TLS.Enabled() {
		tc, err := s.cfg.TLS.Config()
		if err != nil {
			inner.Close()
			return err
		}
		s.served, s.scheme = tls.NewListener(s.ln, tc), "https"
	}
	if soft, ok := fdLimit(); ok && uint64(lim.Connections)+fdReserve > soft {
		s.log.Warn("limits.connections is close to or above the open-file limit; raise `ulimit -n` or lower limits.connections",
			"connections", lim.Connections, "nofile", soft)
	}
	return nil
}

// serve serves h on the listener until SIGINT or SIGTERM (SIGHUP reloads
// the policies and the credentials), then shuts down within shutdownGrace
// and returns the exit code.
func (s *serving) serve(h http.Handler, stdout, stderr io.Writer) int {
	lim := s.cfg.Limits
	srv := &http.Server{
		Handler:           h,
		ConnState:         s.ln.ConnState,
		ReadHeaderTimeout: lim.HeaderTimeout,
		// No ReadTimeout: the body has limits.body_timeout (server.Options),
		// on every path, lifted once the body is read, so streams are not
		// cut by it; a refusal, or any answer that leaves the body unread,
		// closes the connection at once instead of reading on.
		WriteTimeout:   60 * time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 1 << 20,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := s.gd.Watch(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("policy file watching stopped", "err", err)
		}
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(s.served) }()
	s.fl.start(ctx, s.ln.Addr().String())
	fmt.Fprintf(stdout, "warden listening on %s://%s\n", s.scheme, s.ln.Addr())
	s.logServing()
	code := s.wait(serveErr, stderr)
	cancel()
	return s.stop(srv, code, stderr)
}

// logServing logs what is served: the credentials, the policies, the
// tenants, the shadow set.
func (s *serving) logServing() {
	set := s.gd.Policies()
	s.log.Info("serving", "auth_tokens", len(s.cfg.Auth.Tokens), "policies", set.Len(), "from", set.Spec().String(), "revision", fmt.Sprintf("%.12s", set.Revision()), "tenants", len(s.cfg.Tenants), "data", s.data)
	if sh := s.gd.ShadowPolicies(""); sh != nil {
		s.log.Info("shadow set: decided beside the live policies, recorded, never applied",
			"policies", sh.Len(), "from", sh.Spec().String(), "revision", fmt.Sprintf("%.12s", sh.Revision()))
	}
}

// wait reloads on SIGHUP until SIGINT, SIGTERM or the server's end, and
// returns the exit code so far.
func (s *serving) wait(serveErr <-chan error, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				hup := s.log.With("signal", "SIGHUP")
				_ = s.gd.Reload(hup) // logs what changed, or at WARN why not
				s.reloadCfg.reload(hup)
				continue
			}
			s.log.Info("shutting down", "signal", sig.String())
			return exitOK
		case err := <-serveErr:
			if !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(stderr, "warden: serve: %v\n", err)
				return exitError
			}
			return exitOK
		}
	}
}

// stop shuts srv down within shutdownGrace, then the notifier, the
// Guardian, the fleet's parts and the trace, in that order; code becomes
// exitError if one of them fails.
func (s *serving) stop(srv *http.Server, code int, stderr io.Writer) int {
	close(s.shutdown)
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "warden: shutdown: %v\n", err)
		code = exitError
	}
	_ = s.notifier.Close(sctx) // notifications being retried get the grace period
	s.gd.Close(sctx)           // queued async hooks finish, or are recorded as dropped, before the trace closes
	s.fl.stop()                // the publisher and the heartbeat end with ctx
	if err := s.be.Trace.Close(); err != nil {
		fmt.Fprintf(stderr, "warden: flushing the trace: %v\n", err)
		code = exitError
	}
	return code
}

// closeNotifier closes the notifier, if made, within 5 seconds.
func (s *serving) closeNotifier() {
	if s.notifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.notifier.Close(ctx)
}

// loopbackAddr reports whether a listen address serves the loopback
// interface only: localhost, 127.0.0.0/8, ::1, or a name every address of
// which is loopback. An empty host (":8787"), 0.0.0.0, :: and a LAN
// address are not.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// targetHost is the scheme and host of a notification target's URL.
func targetHost(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return "?"
	}
	return u.Scheme + "://" + u.Host
}
