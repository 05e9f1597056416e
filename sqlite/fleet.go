package sqlite

import (
	"context"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
	"github.com/wardenhq/warden/internal/tracesql"
)

// The fleet's small tables (schema 13, schema.go): stream_cursors, the
// decision stream's acknowledged position (audit.CursorStore), and
// instances, the replica registry (registry.Store), kept by the rules
// every store shares (registry.Rules) with the statements shared with
// PostgreSQL (tracesql.Fleet). Both change a few times a second at most,
// in plain transactions on the approvals' connection, never on the
// decision path.

var (
	_ audit.CursorStore = (*Store)(nil)
	_ registry.Store    = (*Store)(nil)
	_ audit.Readier     = (*Store)(nil)
)

func (s *Store) fleet() registry.Rules { return registry.Rules{Rows: tracesql.Fleet{DB: rowDB{s: s}}} }

// StreamCursor returns the record id stored under name, "" for none.
func (s *Store) StreamCursor(ctx context.Context, name string) (string, error) {
	return s.fleet().StreamCursor(ctx, name)
}

// SetStreamCursor stores id under name, durably when it returns.
func (s *Store) SetStreamCursor(ctx context.Context, name, id string) error {
	return s.fleet().SetStreamCursor(ctx, name, id)
}

// Heartbeat stores in, replacing the instance with its ID.
func (s *Store) Heartbeat(ctx context.Context, in registry.Instance) error {
	return s.fleet().Heartbeat(ctx, in)
}

// Instances returns the registered instances, ordered by ID.
func (s *Store) Instances(ctx context.Context) ([]registry.Instance, error) {
	return s.fleet().Instances(ctx)
}

// ForgetInstances deletes the instances last seen before cutoff.
func (s *Store) ForgetInstances(ctx context.Context, cutoff time.Time) (int, error) {
	return s.fleet().ForgetInstances(ctx, cutoff)
}

// Ready reports whether the store can serve a decision: it is open and its
// database answers a read.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	var one int
	if err := s.rdb.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return s.readErr(ctx, "ready", err)
	}
	return nil
}

// checkOpen is ErrClosed once the store is closed.
func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}
