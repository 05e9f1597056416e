package sqlite

import (
	"context"

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

// fleetRules is the registry.Store and audit.CursorStore a Store embeds
// (newFleet).
type fleetRules = registry.Rules

func newFleet(s *Store) fleetRules { return registry.Rules{Rows: tracesql.Fleet{DB: rowDB{s: s}}} }

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
