package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/wardenhq/warden/a2agate"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/mcpgate"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/sqlite"
)

// serveGCPercent is the GC target of `warden serve` unless GOGC is set.
const serveGCPercent = 400

// shutdownGrace bounds how long in-flight requests may take on SIGINT/SIGTERM.
const shutdownGrace = 30 * time.Second

func cmdServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	configPath := fs.String("config", "", "config file (YAML)")
	addr := fs.String("addr", "127.0.0.1:8787", "listen address (port 0 picks a free port)")
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	pprof := fs.Bool("pprof", false, "expose /debug/pprof/ (profiling; keep off in production)")
	policies := addPolicyFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if os.Getenv("GOGC") == "" {
		// The live heap is small (compiled policies, in-flight requests), so
		// trading some memory for less GC work is cheap: measured ~15% more
		// decisions per second under the bench/ load. GOGC overrides it.
		debug.SetGCPercent(serveGCPercent)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	logf := func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) }

	s, err := loadSetup(*configPath, policies)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	metrics := server.NewMetrics()
	store, err := sqlite.Open(*data, sqlite.Options{OnBatch: metrics.ObserveBatch})
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	dec, engine, router, err := s.decider(store, metrics)
	if err != nil {
		store.Close()
		fmt.Fprintln(stderr, err)
		return exitError
	}
	pool := hooks.NewPool(0, 0, store)
	pool.OnRun, pool.OnDrop = metrics.AsyncRun, metrics.AsyncDrop
	var mcpGateway http.Handler // /mcp/{server}, only with configured servers
	if len(s.cfg.MCP) > 0 {
		mcpGateway = mcpgate.NewHTTP(dec, s.cfg.MCP, mcpgate.HTTPOptions{Logf: logf})
	}
	var a2aProxy http.Handler // /a2a/{agent}, only with configured agents
	if len(s.cfg.A2A) > 0 {
		a2aProxy = a2agate.New(dec, s.cfg.A2A, a2agate.Options{Logf: logf})
	}
	handler := server.New(server.Options{
		AOS:         aos.NewHandler(dec, aos.Options{Version: version, Logf: logf}),
		Dispatch:    hooks.NewDispatcher(dec, router, pool),
		HookCatalog: router.CatalogHandler(),
		A2A:         a2aProxy,
		MCP:         mcpGateway,
		Store:       store,
		Metrics:     metrics,
		Pprof:       *pprof,
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		store.Close()
		return fail(stderr, "listen on %s: %v", *addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if len(s.paths) > 0 {
		go func() {
			if err := engine.Watch(ctx, log); err != nil && ctx.Err() == nil {
				log.Warn("policy file watching stopped", "err", err)
			}
		}()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "warden listening on http://%s\n", ln.Addr())
	log.Info("serving", "policies", s.set.Len(), "data", *data)

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	code := exitOK
loop:
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				if len(s.paths) == 0 {
					log.Info("SIGHUP: serving the built-in pack, nothing to reload")
				} else {
					_ = engine.Reload(log.With("signal", "SIGHUP")) // logs the outcome
				}
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
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "warden: shutdown: %v\n", err)
		code = exitError
	}
	pool.Close(sctx) // queued async hooks finish (and are recorded) before the trace closes
	if err := store.Close(); err != nil {
		fmt.Fprintf(stderr, "warden: flushing the trace: %v\n", err)
		code = exitError
	}
	return code
}
