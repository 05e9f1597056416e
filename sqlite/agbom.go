package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/agbom"
)

// The AgBOM of every agent and the MCP tool pins (agbom.Store,
// docs/agbom.md) live in two tables of trace.db (schema 10, schema.go):
// agbom_components, one row per component of an agent keyed by (tenant,
// agent, id), and mcp_tool_pins, one row per pinned tool keyed by (server,
// name). Every change is one IMMEDIATE transaction on the approvals'
// connection (approvalTx), so the bounds are checked against what the
// transaction sees and a refused update writes nothing; reads go through
// the read-only connections. Times are unix microseconds, UTC.

var _ agbom.Store = (*Store)(nil)

// errBound aborts a transaction that would pass a bound.
var errBound = errors.New("bound")

// UpdateAgBOM applies u in one transaction (see agbom.Store).
func (s *Store) UpdateAgBOM(ctx context.Context, u *agbom.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	var full error
	err := s.approvalTx(ctx, "update AgBOM", func(tx *sql.Tx) error {
		var before int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM agbom_components WHERE tenant = ? AND agent = ?`, u.Tenant, u.Agent).Scan(&before); err != nil {
			return err
		}
		if u.Replace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM agbom_components WHERE tenant = ? AND agent = ? AND source = ?`, u.Tenant, u.Agent, u.Source); err != nil {
				return err
			}
		}
		for _, id := range u.Remove {
			if _, err := tx.ExecContext(ctx, `DELETE FROM agbom_components WHERE tenant = ? AND agent = ? AND id = ?`, u.Tenant, u.Agent, id); err != nil {
				return err
			}
		}
		for _, c := range u.Put {
			if _, err := tx.ExecContext(ctx, `INSERT INTO agbom_components (tenant, agent, id, type, source, doc, updated)
				VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (tenant, agent, id) DO UPDATE SET type = excluded.type, source = excluded.source,
					doc = excluded.doc, updated = excluded.updated`,
				u.Tenant, u.Agent, c.ID, c.Type, u.Source, string(c.Doc), micro(u.At)); err != nil {
				return err
			}
		}
		var after int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM agbom_components WHERE tenant = ? AND agent = ?`, u.Tenant, u.Agent).Scan(&after); err != nil {
			return err
		}
		if after > agbom.MaxComponents {
			full = fmt.Errorf("%w: agent %q would have %d components (at most %d)", agbom.ErrFull, u.Agent, after, agbom.MaxComponents)
			return errBound
		}
		if before == 0 && after > 0 {
			var agents int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM agbom_components GROUP BY tenant, agent)`).Scan(&agents); err != nil {
				return err
			}
			if agents > agbom.MaxAgents {
				full = fmt.Errorf("%w: %d agents have an AgBOM (at most %d)", agbom.ErrFull, agents-1, agbom.MaxAgents)
				return errBound
			}
		}
		return nil
	})
	if full != nil {
		return full
	}
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrReadOnly) {
		return s.approvalErr(ctx, "update AgBOM", err)
	}
	return err
}

// AgBOM returns the agent's components ordered by id, or agbom.ErrNoAgBOM.
func (s *Store) AgBOM(ctx context.Context, tenant, agent string) ([]agbom.StoredComponent, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, type, source, doc, updated FROM agbom_components
		WHERE tenant = ? AND agent = ? ORDER BY id`, tenant, agent)
	if err != nil {
		return nil, s.approvalErr(ctx, "read AgBOM", err)
	}
	defer rows.Close()
	var out []agbom.StoredComponent
	for rows.Next() {
		var c agbom.StoredComponent
		var doc string
		var updated int64
		if err := rows.Scan(&c.ID, &c.Type, &c.Source, &doc, &updated); err != nil {
			return nil, s.approvalErr(ctx, "read AgBOM", err)
		}
		c.Doc, c.Updated = []byte(doc), fromMicro(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.approvalErr(ctx, "read AgBOM", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q", agbom.ErrNoAgBOM, agent)
	}
	return out, nil
}

// AgBOMAgents lists the agents with an AgBOM (see agbom.Store).
func (s *Store) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]agbom.Agent, error) {
	if limit <= 0 {
		limit = agbom.MaxAgents
	}
	q := `SELECT tenant, agent, COUNT(*), MAX(updated) FROM agbom_components`
	args := []any{}
	if !all {
		q += ` WHERE tenant = ?`
		args = append(args, tenant)
	}
	q += ` GROUP BY tenant, agent ORDER BY tenant, agent LIMIT ?`
	rows, err := s.rdb.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, s.approvalErr(ctx, "list AgBOM agents", err)
	}
	defer rows.Close()
	var out []agbom.Agent
	for rows.Next() {
		var a agbom.Agent
		var updated int64
		if err := rows.Scan(&a.Tenant, &a.ID, &a.Components, &updated); err != nil {
			return nil, s.approvalErr(ctx, "list AgBOM agents", err)
		}
		a.Updated = fromMicro(updated)
		out = append(out, a)
	}
	return out, rows.Err()
}

// ToolPins returns the server's pins ordered by name.
func (s *Store) ToolPins(ctx context.Context, server string) ([]agbom.ToolPin, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT name, description, input_schema, hash, pinned FROM mcp_tool_pins
		WHERE server = ? ORDER BY name`, server)
	if err != nil {
		return nil, s.approvalErr(ctx, "read tool pins", err)
	}
	defer rows.Close()
	out := []agbom.ToolPin{}
	for rows.Next() {
		p := agbom.ToolPin{Server: server}
		var schema string
		var pinned int64
		if err := rows.Scan(&p.Name, &p.Description, &schema, &p.Hash, &pinned); err != nil {
			return nil, s.approvalErr(ctx, "read tool pins", err)
		}
		if schema != "" {
			p.InputSchema = []byte(schema)
		}
		p.Pinned = fromMicro(pinned)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.approvalErr(ctx, "read tool pins", err)
	}
	return out, nil
}

// PinTools creates, replaces and drops the server's pins in one
// transaction.
func (s *Store) PinTools(ctx context.Context, server string, put []agbom.ToolPin, remove []string) error {
	if err := agbom.CheckToolPins(server, put); err != nil {
		return err
	}
	var full error
	err := s.approvalTx(ctx, "pin tools", func(tx *sql.Tx) error {
		for _, n := range remove {
			if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_tool_pins WHERE server = ? AND name = ?`, server, n); err != nil {
				return err
			}
		}
		for _, p := range put {
			if _, err := tx.ExecContext(ctx, `INSERT INTO mcp_tool_pins (server, name, description, input_schema, hash, pinned)
				VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (server, name) DO UPDATE SET description = excluded.description,
					input_schema = excluded.input_schema, hash = excluded.hash, pinned = excluded.pinned`,
				server, p.Name, p.Description, string(p.InputSchema), p.Hash, micro(p.Pinned)); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mcp_tool_pins WHERE server = ?`, server).Scan(&n); err != nil {
			return err
		}
		if n > agbom.MaxToolPins {
			full = fmt.Errorf("%w: MCP server %q would have %d pinned tools (at most %d)", agbom.ErrFull, server, n, agbom.MaxToolPins)
			return errBound
		}
		return nil
	})
	if full != nil {
		return full
	}
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrReadOnly) {
		return s.approvalErr(ctx, "pin tools", err)
	}
	return err
}
