package guardian

import (
	"errors"
	"os"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/redact"
)

// storeOpenTimeout bounds connecting to PostgreSQL (and migrating) when the
// Guardian opens the config's store:.
const storeOpenTimeout = 30 * time.Second

// postgresFilter is traceSetup for a PostgreSQL trace: it is redacted as a
// data directory's is (unless trace.raw_input or a RecordFilter), with the
// key in KeyDir (default Data). It is not pruned: retention of a shared
// database is the operator's (docs/postgres.md).
func (g *Guardian) postgresFilter(opts Options) (audit.RecordFilter, func(string) string, error) {
	if opts.RecordFilter != nil || g.cfg.Trace.RawInput {
		return opts.RecordFilter, nil, nil
	}
	dir := opts.KeyDir
	if dir == "" {
		dir = opts.Data
	}
	if dir == "" {
		return nil, nil, errors.New("a PostgreSQL trace is redacted with the key in a data directory's trace.key: give --data (guardian.Options.KeyDir), or set trace.raw_input")
	}
	// The data directory may hold nothing else with a PostgreSQL trace:
	// make it as the SQLite store would (owner only).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	key, err := redact.LoadKey(dir)
	if err != nil {
		return nil, nil, err
	}
	r := redact.New(key)
	return r.Filter, r.String, nil
}
