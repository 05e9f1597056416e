package postgres

import (
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

// fleetRules is the registry.Store and audit.CursorStore a Store embeds
// (newFleet).
type fleetRules = registry.Rules

func newFleet(s *Store) fleetRules { return registry.Rules{Rows: tracesql.Fleet{DB: rowDB{s: s}}} }
