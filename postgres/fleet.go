package postgres

import (
	"context"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
	"github.com/wardenhq/warden/internal/tracesql"
)

// The decision stream's acknowledged position (audit.CursorStore) lives in
// stream_cursors, one row per cursor name, and the replica registry
// (registry.Store, GET /api/instances) in instances, one row per replica,
// upserted by each heartbeat; both kept by the rules every store shares
// (registry.Rules) with the statements shared with SQLite
// (tracesql.Fleet). The replicas of a fleet share the cursor:
// stream.Publisher's lease makes one of them publish at a time, and the
// one that takes over continues from the cursor the other stored.

var (
	_ audit.CursorStore = (*Store)(nil)
	_ registry.Store    = (*Store)(nil)
)

func (s *Store) fleet() registry.Rules { return registry.Rules{Rows: tracesql.Fleet{DB: rowDB{s: s}}} }

// StreamCursor returns the record id stored under name, "" for none.
func (s *Store) StreamCursor(ctx context.Context, name string) (string, error) {
	return s.fleet().StreamCursor(ctx, name)
}

// SetStreamCursor stores id under name; committed when it returns.
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
