package guardian

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/config"

	"github.com/wardenhq/warden/redact"
)

// storeOpenTimeout bounds connecting to PostgreSQL (and migrating) when the
// Guardian opens the config's store:.
const storeOpenTimeout = 30 * time.Second

// openBackend returns the backend opts give (Options.Backend, Store, or
// one Data opens, which the Guardian then owns) — never nil: the zero
// Backend without a trace.
func openBackend(opts Options, cfg *config.Config) (b *backend.Backend, owned bool, err error) {
	switch {
	case opts.Backend != nil:
		return opts.Backend, false, nil
	case opts.Store != nil || opts.Data == "":
		return backend.Of(opts.Store), false, nil
	}
	url, what := backend.DirURL(opts.Data), "the trace in "+opts.Data
	if cfg.Store != "" {
		// store: postgres://… (backend.CheckStoreURL) — the shared trace
		// and state of a fleet; Data keeps its redaction key.
		url, what = cfg.Store, "the store in PostgreSQL"
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	if b, err = backend.Open(ctx, url, backend.Options{}); err != nil {
		return nil, false, fmt.Errorf("opening %s: %w", what, err)
	}
	return b, true, nil
}

// traceSetup starts the trace's pruning (trace.retention, trace.max_size)
// when the backend prunes, and returns the record filter: opts'
// RecordFilter, else, for a backend that keeps its records (Redact), the
// redaction with the key in its directory (KeyDir, default Data, for a
// backend with none, PostgreSQL) unless trace.raw_input. See Options.Data.
func (g *Guardian) traceSetup(opts Options) (audit.RecordFilter, func(string) string, error) {
	b, tc := g.backend, g.cfg.Trace
	if b.Pruner != nil {
		// With acs.signing_key, the checkpoints are signed with it
		// (ML-DSA-65 or SLH-DSA-128s) rather than the data directory's
		// Ed25519 key.
		r := backend.Retention{MaxAge: tc.Retention, MaxSize: int64(tc.MaxSize), SigningKey: g.cfg.ACS.SigningKey}
		if err := b.Pruner.StartPruning(r, func(err error) { g.log.Warn("pruning the trace", "err", err) }); err != nil {
			return nil, nil, err
		}
	}
	if !b.Redact || opts.RecordFilter != nil || tc.RawInput {
		return opts.RecordFilter, nil, nil
	}
	dir := b.Dir
	if dir == "" {
		if dir = opts.KeyDir; dir == "" {
			dir = opts.Data
		}
		if dir == "" {
			return nil, nil, fmt.Errorf("a %s trace is redacted with the key in a data directory's trace.key: give --data (guardian.Options.KeyDir), or set trace.raw_input", b.Name)
		}
		// The data directory may hold nothing else with such a trace:
		// make it as the SQLite store would (owner only).
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, err
		}
	}
	key, err := redact.LoadKey(dir)
	if err != nil {
		return nil, nil, err
	}
	r := redact.New(key)
	return r.Filter, r.String, nil
}
