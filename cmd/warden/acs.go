package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
)

// acsHandler builds the ACS Guardian (docs/acs.md) of gd from the
// config's acs: section, keeping its sessions in the backend b.
func acsHandler(gd *guardian.Guardian, b *backend.Backend, cfg *config.Config, logf func(string, ...any)) (*acs.Handler, error) {
	sessions := b.ACS
	if sessions == nil {
		return nil, errors.New("acs: the trace store keeps no ACS sessions")
	}
	a := cfg.ACS
	return acs.NewHandler(gd, acs.Options{
		Sessions: sessions, Keys: a.Keys, RequireSignatures: a.RequireSignatures, RequireProvenance: a.RequireProvenance,
		SigningKey: a.SigningKey, PublicKeys: a.PublicKeys,
		SkewWindow: a.SkewWindow, ReplayWindow: a.ReplayWindow, DeferMax: a.Defer.MaxPerSession,
		Approvals: gd.Approvals() != nil, ApprovalsURL: cfg.Approvals.URL, ApprovalWait: cfg.Approvals.Wait,
		MaxBatch: cfg.Limits.Batch, MaxResponse: int64(cfg.Limits.ResponseBytes), Version: version, Logf: logf,
		TraceOTel: cfg.OTel.Enabled(), TraceOCSF: cfg.Trace.OCSFFile != "",
		Inspect: gd.AgBOMStore() != nil,
	})
}

// cmdACS is `warden acs stdio [--config F] [--policy PATH]... [--data DIR]`
// (docs/acs.md): an ACS Guardian on stdin/stdout with Content-Length
// framing, for an agent that starts its Guardian as a subprocess. stdout
// is the ACS channel; everything else goes to stderr.
func cmdACS(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "stdio" {
		return fail(stderr, "acs: usage: warden acs stdio [--config F] [--policy PATH]... [--builtin=false] [--data DIR]")
	}
	fs := newFlags("acs stdio", stderr)
	gf := addGuardianFlags(fs)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace and ACS sessions; several processes may share it)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError
	}
	opts := gf.options()
	cfg, err := opts.LoadConfig()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	store, _, err := openServeStore(cfg.Store, *data, nil, false) // store: postgres://… when configured
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	opts.Config, opts.ConfigFile = cfg, ""
	opts.Backend, opts.Logger, opts.KeyDir = store, log, *data
	gd, err := guardian.Open(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gd.Close(cctx)
	}()
	h, err := acsHandler(gd, store, cfg, func(f string, a ...any) { log.Info(fmt.Sprintf(f, a...)) })
	if err != nil {
		return fail(stderr, "%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(ctx, stdin, stdout) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			return fail(stderr, "%v", err)
		}
	case <-ctx.Done(): // a signal: stop while a read is blocked
	}
	return exitOK
}
