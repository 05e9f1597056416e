package postgres

import (
	"context"

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

func (s *Store) agbom() agbom.Rules { return agbom.Rules{Rows: tracesql.AgBOM{DB: rowDB{s: s}}} }

// UpdateAgBOM applies u in one transaction (see agbom.Store).
func (s *Store) UpdateAgBOM(ctx context.Context, u *agbom.Update) error {
	return s.agbom().UpdateAgBOM(ctx, u)
}

// AgBOM returns the agent's components ordered by id, or agbom.ErrNoAgBOM.
func (s *Store) AgBOM(ctx context.Context, tenant, agent string) ([]agbom.StoredComponent, error) {
	return s.agbom().AgBOM(ctx, tenant, agent)
}

// AgBOMAgents lists the agents with an AgBOM (see agbom.Store).
func (s *Store) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]agbom.Agent, error) {
	return s.agbom().AgBOMAgents(ctx, tenant, all, limit)
}

// ToolPins returns the server's pins ordered by name.
func (s *Store) ToolPins(ctx context.Context, server string) ([]agbom.ToolPin, error) {
	return s.agbom().ToolPins(ctx, server)
}

// PinTools creates, replaces and drops the server's pins in one
// transaction.
func (s *Store) PinTools(ctx context.Context, server string, put []agbom.ToolPin, remove []string) error {
	return s.agbom().PinTools(ctx, server, put, remove)
}
