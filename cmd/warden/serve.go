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

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden/a2agate"
	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/mcpgate"
	"github.com/wardenhq/warden/notify"
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

func cmdServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
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
		return code
	}
	opts := gf.options()
	opts.Shadow = shadow
	cfg := config.Default()
	if opts.ConfigFile != "" {
		c, err := config.Load(opts.ConfigFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitError
		}
		cfg = c
	}
	reloadCfg := newConfigReload(opts.ConfigFile, cfg) // what SIGHUP reloads besides the policies
	opts.Config, opts.ConfigFile = cfg, ""
	if *storeURL == "" {
		*storeURL = cfg.Store
	}
	if err := checkStoreFlag(*storeURL); err != nil {
		return fail(stderr, "%v", err)
	}
	loopback := loopbackAddr(*addr)
	if !cfg.Auth.Enabled() && !loopback && !*insecure {
		return fail(stderr, "refusing to serve %s without authentication: configure auth.tokens in --config (see 'warden token new'), or pass --insecure", *addr)
	}
	if os.Getenv("GOGC") == "" {
		// The live heap is small (compiled policies, in-flight requests), so
		// trading some memory for less GC work is cheap: measured ~15% more
		// decisions per second under the bench/ load. GOGC overrides it.
		debug.SetGCPercent(serveGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	logf := func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) }

	metrics := server.NewMetrics()
	be, _, err := openServeStore(*storeURL, *data, metrics.ObserveBatch, *traceLog)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	store := be.Trace // closing it closes be
	// The console's counts (the overview, the policies' matches) beside the
	// Prometheus metrics.
	counts := stats.New(nil)
	opts.Backend, opts.Observer, opts.Logger = be, pipeline.Observers{metrics, counts}, log
	opts.KeyDir = *data // a PostgreSQL trace's redaction key (trace.key)
	opts.OnAsyncRun, opts.OnAsyncDrop = metrics.AsyncRun, metrics.AsyncDrop
	if cfg.Approvals.URL == "" {
		// Notification links point at this server unless approvals.url says
		// where people reach it.
		if _, port, err := net.SplitHostPort(*addr); err == nil && port != "0" {
			sch := "http"
			if cfg.TLS.Enabled() {
				sch = "https"
			}
			cfg.Approvals.URL = sch + "://" + *addr
		}
	}
	notifier := notify.New(cfg.Approvals.Notify, notify.Options{OnResult: func(r notify.Result) {
		if r.Err != nil {
			// The target's host only: a Slack webhook's path is its secret.
			log.Warn("approval notification failed", "approval", r.ApprovalID, "target", targetHost(r.Target),
				"attempt", r.Attempt, "final", r.Final, "status", r.Status, "err", r.Err)
		}
	}})
	defer func() { // on early returns; after a shutdown this returns at once
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = notifier.Close(ctx)
	}()
	opts.Notifier = notifier
	gd, err := guardian.Open(opts)
	if err != nil {
		store.Close()
		fmt.Fprintln(stderr, err)
		return exitError
	}
	fl, err := newFleet(cfg, be, gd, metrics, log) // the decision stream, the instance registry, /readyz
	if err != nil {
		store.Close()
		return fail(stderr, "%v", err)
	}
	var traceHTTP func(string, http.Handler) http.Handler // otel: spans of the decision surfaces
	if e := gd.OTel(); e != nil {
		traceHTTP = e.Middleware
		metrics.AddCounterFunc("warden_otel_decisions_dropped_total", "Decisions not made into spans because the otel queue was full.",
			func() uint64 { d, _ := e.Dropped(); return d })
		metrics.AddCounterFunc("warden_otel_spans_dropped_total", "Spans not exported because the otel export queue was full.",
			func() uint64 { _, s := e.Dropped(); return s })
	}
	if s := gd.OCSF(); s != nil {
		metrics.AddCounterFunc("warden_ocsf_dropped_total", "Decisions not written to trace.ocsf_file because its queue was full.", s.Dropped)
	}
	var sessions *auth.Sessions // console sign-in, with auth on
	if cfg.Auth.Enabled() {
		key, err := auth.LoadSessionKey(*data)
		if err != nil {
			store.Close()
			return fail(stderr, "the console's session key: %v", err)
		}
		sessions = auth.NewSessions(key, &cfg.Auth)
	}
	lim := cfg.Limits
	if *insecure {
		if cfg.Auth.Enabled() || loopback {
			log.Warn("--insecure has no effect here: the surfaces are protected by auth.tokens or served on loopback only", "addr", *addr)
		} else {
			log.Warn("serving WITHOUT authentication on a non-loopback address (--insecure): anyone who can reach it can decide, dispatch and read the trace; configure auth.tokens", "addr", *addr)
		}
	}
	gwIDs, err := gatewayIDs(cfg, log) // sealed MCP session and A2A task ids
	if err != nil {
		store.Close()
		return fail(stderr, "%v", err)
	}
	var mcpGateway http.Handler // /mcp/{server}, only with configured servers
	if len(cfg.MCP) > 0 {
		var pins *mcpgate.Pins // tool pinning, in the trace's store
		if bs := gd.AgBOMStore(); bs != nil {
			pins = &mcpgate.Pins{Store: bs, Logf: logf}
		}
		mcpGateway = mcpgate.NewHTTP(gd, cfg.MCP, mcpgate.HTTPOptions{MaxBatch: lim.Batch, Logf: logf, Pins: pins, Sessions: gwIDs})
	}
	var a2aProxy http.Handler // /a2a/{agent}, only with configured agents
	if len(cfg.A2A) > 0 {
		a2aProxy = a2agate.New(gd, cfg.A2A, a2agate.Options{Logf: logf, AgBOM: gd.AgBOMStore(), Tasks: gwIDs})
	}
	acsGuardian, err := acsHandler(gd, be, cfg, logf)
	if err != nil {
		store.Close()
		return fail(stderr, "%v", err)
	}
	shutdown := make(chan struct{}) // closed as shutdown begins: ends the runs streams
	handler := server.New(server.Options{
		AOS:           aos.NewHandler(gd, aos.Options{Version: version, MaxBatch: lim.Batch, MaxResponse: lim.ResponseBytes, Logf: logf}),
		ACS:           acsGuardian,
		ACSSessions:   acs.SessionHandler(be.ACS),
		AgBOM:         agbom.Handler(be.AgBOM),
		Dispatch:      gd.Dispatcher(),
		HookCatalog:   gd.Hooks().CatalogHandler(),
		A2A:           a2aProxy,
		MCP:           mcpGateway,
		Store:         store,
		Approvals:     gd.Approvals(),
		Metrics:       metrics,
		Pprof:         *pprof,
		RunsBytes:     lim.RunsBytes,
		BodyTimeout:   lim.BodyTimeout,
		TenantStreams: lim.TenantStreams,
		Done:          shutdown,
		Security:      server.Security{Auth: &cfg.Auth, Origins: cfg.Origins, Sessions: sessions},
		Stats:         counts,
		Policies:      gd,
		Tenants:       cfg.TenantNames(),
		Trace:         traceHTTP,
		Readyz:        fl.readyz,
		Instances:     fl.instancesHandler(),
	})

	inner, err := net.Listen("tcp", *addr)
	if err != nil {
		store.Close()
		return fail(stderr, "listen on %s: %v", *addr, err)
	}
	// At most limits.connections open: past it the oldest connection that
	// is not serving a request is closed, so a flood of slow connections
	// neither exhausts file descriptors nor keeps /healthz out.
	ln := server.LimitConns(inner, lim.Connections)
	var served net.Listener = ln
	scheme := "http"
	if cfg.TLS.Enabled() {
		tc, err := cfg.TLS.Config()
		if err != nil {
			inner.Close()
			store.Close()
			return fail(stderr, "%v", err)
		}
		served, scheme = tls.NewListener(ln, tc), "https"
	}
	if soft, ok := fdLimit(); ok && uint64(lim.Connections)+fdReserve > soft {
		log.Warn("limits.connections is close to or above the open-file limit; raise `ulimit -n` or lower limits.connections",
			"connections", lim.Connections, "nofile", soft)
	}
	srv := &http.Server{
		Handler:           handler,
		ConnState:         ln.ConnState,
		ReadHeaderTimeout: lim.HeaderTimeout,
		// No ReadTimeout: the body has limits.body_timeout (server.Options),
		// on every path, lifted once the body is read, so streams are not
		// cut by it; a refusal, or any answer that leaves the body unread,
		// closes the connection at once instead of reading on.
		WriteTimeout:   60 * time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 1 << 20,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := gd.Watch(ctx); err != nil && ctx.Err() == nil {
			log.Warn("policy file watching stopped", "err", err)
		}
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(served) }()
	fl.start(ctx, ln.Addr().String())
	fmt.Fprintf(stdout, "warden listening on %s://%s\n", scheme, ln.Addr())
	set := gd.Policies()
	log.Info("serving", "auth_tokens", len(cfg.Auth.Tokens), "policies", set.Len(), "from", set.Spec().String(), "revision", fmt.Sprintf("%.12s", set.Revision()), "tenants", len(cfg.Tenants), "data", *data)
	if sh := gd.ShadowPolicies(""); sh != nil {
		log.Info("shadow set: decided beside the live policies, recorded, never applied",
			"policies", sh.Len(), "from", sh.Spec().String(), "revision", fmt.Sprintf("%.12s", sh.Revision()))
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	code := exitOK
loop:
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				hup := log.With("signal", "SIGHUP")
				_ = gd.Reload(hup) // logs what changed, or at WARN why not
				reloadCfg.reload(hup)
				continue
			}
			log.Info("shutting down", "signal", sig.String())
			break loop
		case err := <-serveErr:
			if !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(stderr, "warden: serve: %v\n", err)
				code = exitError
			}
			break loop
		}
	}
	cancel()
	close(shutdown)
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "warden: shutdown: %v\n", err)
		code = exitError
	}
	_ = notifier.Close(sctx) // notifications being retried get the grace period
	gd.Close(sctx)           // queued async hooks finish, or are recorded as dropped, before the trace closes
	fl.stop()                // the publisher and the heartbeat end with ctx
	if err := store.Close(); err != nil {
		fmt.Fprintf(stderr, "warden: flushing the trace: %v\n", err)
		code = exitError
	}
	return code
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
