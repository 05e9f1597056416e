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
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/unseal"
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
	sealer, err := g.sealSetup(opts)
	if err != nil {
		return nil, nil, err
	}
	filter := r.RecordFilter(sealer)
	if sealer != nil {
		filter = g.withoutOriginalsOnError(filter)
	}
	return filter, r.String, nil
}

// withoutOriginalsOnError stores a record whose originals could not be
// sealed (the key store unreachable, a DEK wrapped by a KEK this process
// does not hold after a rotation it has not picked up) redacted, without
// its originals, instead of refusing the step: originals make the trace
// usable, they are never a reason to deny an agent. Each such record is
// counted (SealFailures) and logged, the first and then at each power of
// two, so a lasting failure is loud without flooding the log.
func (g *Guardian) withoutOriginalsOnError(f audit.RecordFilter) audit.RecordFilter {
	return func(ctx context.Context, rec *audit.Record) error {
		err := f(ctx, rec)
		if err == nil {
			return nil
		}
		rec.Sealed = nil // rec is redacted: Filter ran before sealing failed
		if n := g.sealFailures.Add(1); n&(n-1) == 0 {
			g.log.Warn("a record is stored redacted without its originals: they could not be sealed",
				"record", rec.ID, "failures", n, "err", err)
		}
		return nil
	}
}

// SealFailures counts the records stored without their originals because
// sealing them failed (see docs/security.md).
func (g *Guardian) SealFailures() int64 { return g.sealFailures.Load() }

// sealExpireEvery is how often the keys of expired periods are destroyed
// (trace.seal.retention), besides once at start.
const sealExpireEvery = time.Hour

// sealSetup returns the Sealer of the originals of redacted values (nil
// when trace.seal is off or the backend keeps no keys), sets the
// Guardian's unseal Service, and starts destroying expired periods' keys
// (trace.seal.retention, default trace.retention) until Close.
func (g *Guardian) sealSetup(opts Options) (*seal.Sealer, error) {
	sc := g.cfg.Trace.Seal
	if !sc.On() || g.backend.Seal == nil {
		return nil, nil
	}
	kek, where, err := sc.KEK()
	if err != nil {
		return nil, fmt.Errorf("trace.seal: %w", err)
	}
	if dir := g.backend.Dir; dir != "" && where != "" && seal.InDir(where, dir) {
		g.log.Warn("trace.seal: the KEK file is inside the data directory: a copy of the directory then opens every sealed original", "kek_file", where)
	}
	s, err := seal.New(seal.Options{KEK: kek, Store: g.backend.Seal, Granularity: sc.Granularity()})
	if err != nil {
		return nil, err
	}
	g.unseal = unseal.New(s, g.store)
	keep := sc.Retention
	if keep == 0 {
		keep = g.cfg.Trace.Retention
	}
	g.log.Info("sealing the originals of redacted values", "kek", where, "kek_id", kek.ID(),
		"period", sc.Granularity().String(), "retention", keep)
	if keep > 0 {
		g.sealStop = make(chan struct{})
		g.sealDone = make(chan struct{})
		go g.expireSealed(s, keep)
	}
	return s, nil
}

// expireSealed destroys the keys of the periods that ended more than keep
// ago, now and every sealExpireEvery, until sealStop is closed.
func (g *Guardian) expireSealed(s *seal.Sealer, keep time.Duration) {
	defer close(g.sealDone)
	t := time.NewTicker(sealExpireEvery)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
		done, err := s.ExpirePeriods(ctx, time.Now().Add(-keep))
		cancel()
		if err != nil {
			g.log.Warn("destroying the sealing keys of expired periods", "err", err)
		} else if len(done) > 0 {
			g.log.Info("destroyed the sealing keys of expired periods", "periods", len(done))
		}
		select {
		case <-g.sealStop:
			return
		case <-t.C:
		}
	}
}

// Unseal returns the service that opens and erases the trace's sealed
// originals (nil when they are not kept: trace.raw_input, trace.seal
// off, or a backend without a key store).
func (g *Guardian) Unseal() *unseal.Service { return g.unseal }
