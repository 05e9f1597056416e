package postgres

import (
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/internal/tracesql"
)

// The AgBOM of every agent and the MCP tool pins (agbom.Store,
// docs/agbom.md) live in agbom_components and mcp_tool_pins, kept by the
// rules every store shares (agbom.Rules) with the statements shared with
// SQLite (tracesql.AgBOM). Every change is one transaction holding the
// advisory lock of what it bounds (rowDB.Lock): the agent's for its
// components, also the agents' count's (taken after, so never in the other
// order) when the update gives a new agent an AgBOM, and the server's for
// its pins. The bounds are checked against what the transaction sees, so
// they hold with several replicas writing, and a refused update writes
// nothing.

var _ agbom.Store = (*Store)(nil)

// agbomRules is the agbom.Store a Store embeds (newAgBOM).
type agbomRules = agbom.Rules

func newAgBOM(s *Store) agbomRules { return agbom.Rules{Rows: tracesql.AgBOM{DB: rowDB{s: s}}} }
