package postgres

import (
	"context"

	"github.com/wardenhq/warden/backend"
)

// Importing this package registers the PostgreSQL backend: backend.Open of
// a postgres:// or postgresql:// URL opens the database it names.
func init() {
	backend.Register("postgres", openBackend)
	backend.Register("postgresql", openBackend)
}

var _ backend.Provider = (*Store)(nil)

// openBackend is the backend driver: Open of url, read only with
// opts.ReadOnly.
func openBackend(ctx context.Context, url string, opts backend.Options) (*backend.Backend, error) {
	s, err := Open(ctx, url, Options{ReadOnly: opts.ReadOnly, OnBatch: opts.OnBatch})
	if err != nil {
		return nil, err
	}
	return s.Backend(), nil
}

// Backend returns the store with what it keeps: every feature, redacted
// with a key in a directory the caller gives (a database has none of its
// own), and Shared: replicas of a fleet write the same database. It is not
// pruned: retention of a shared database is the operator's
// (docs/postgres.md).
func (s *Store) Backend() *backend.Backend {
	return &backend.Backend{Name: "PostgreSQL", Trace: s,
		Approvals: s, Labels: s, ACS: s, AgBOM: s, Registry: s, Cursors: s, Ready: s, Seal: s.SealKeys(),
		Redact: true, Shared: true}
}
