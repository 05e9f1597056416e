package sqlite

import (
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/internal/tracesql"
)

// The AgBOM of every agent and the MCP tool pins (agbom.Store,
// docs/agbom.md) live in two tables of trace.db (schema 10, schema.go),
// kept by the rules every store shares (agbom.Rules) with the statements
// shared with PostgreSQL (tracesql.AgBOM).

var _ agbom.Store = (*Store)(nil)

// agbomRules is the agbom.Store a Store embeds (newAgBOM).
type agbomRules = agbom.Rules

func newAgBOM(s *Store) agbomRules { return agbom.Rules{Rows: tracesql.AgBOM{DB: rowDB{s: s}}} }
