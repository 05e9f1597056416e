package sqlite

import (
	"context"
	"strings"

	"github.com/wardenhq/warden/backend"
)

// Scheme is the URL scheme of a SQLite trace: sqlite:DIR. A bare directory
// path opens one too (backend.DefaultScheme).
const Scheme = "sqlite"

// Importing this package registers the SQLite backend: backend.Open of
// sqlite:DIR, or of a bare directory path, opens the store in DIR.
func init() { backend.Register(Scheme, openBackend) }

var _ backend.Provider = (*Store)(nil)

// openBackend is the backend driver: Open, or OpenReadOnly with
// opts.ReadOnly, of the directory after "sqlite:".
func openBackend(_ context.Context, url string, opts backend.Options) (*backend.Backend, error) {
	dir := strings.TrimPrefix(url, Scheme+":")
	var (
		s   *Store
		err error
	)
	if opts.ReadOnly {
		s, err = OpenReadOnly(dir)
	} else {
		s, err = Open(dir, Options{OnBatch: opts.OnBatch, Log: opts.TraceLog})
	}
	if err != nil {
		return nil, err
	}
	return s.Backend(), nil
}

// Backend returns the store with what it keeps: every feature; its
// directory, which holds the redaction key; redacted; pruned by
// trace.retention and trace.max_size. It is not Shared: a session's labels
// are cached in the process, and the decision stream is published without
// a lease.
func (s *Store) Backend() *backend.Backend {
	b := &backend.Backend{Name: "SQLite", Trace: s,
		Approvals: s, Labels: s, ACS: s, AgBOM: s, Registry: s, Cursors: s, Ready: s, Seal: s.SealKeys(),
		Dir: s.dir, Redact: s.dir != ""}
	if s.dir != "" {
		b.Pruner = pruning{s}
	}
	return b
}

// pruning is the store's backend.Pruner.
type pruning struct{ s *Store }

func (p pruning) StartPruning(r backend.Retention, onErr func(error)) error {
	return p.s.StartPruning(Retention{MaxAge: r.MaxAge, MaxSize: r.MaxSize, SigningKey: r.SigningKey}, onErr)
}
