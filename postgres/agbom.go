package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/agbom"

	"github.com/jackc/pgx/v5"
)

// The AgBOM of every agent and the MCP tool pins (agbom.Store,
// docs/agbom.md) live in agbom_components, one row per component keyed by
// (tenant, agent, id), and mcp_tool_pins, one row per pinned tool keyed by
// (server, name). Every change is one transaction holding the advisory
// lock of what it bounds: the agent's (lockAgBOM) for its components, also
// the agents' count's (lockAgents, taken after, so never in the other
// order) when the update gives a new agent an AgBOM, and the server's
// (lockPins) for its pins. The bounds are checked against what the
// transaction sees, so they hold with several replicas writing, and a
// refused update writes nothing.

var _ agbom.Store = (*Store)(nil)

// errBound aborts a transaction that would pass a bound.
var errBound = errors.New("bound")

// UpdateAgBOM applies u in one transaction (see agbom.Store).
func (s *Store) UpdateAgBOM(ctx context.Context, u *agbom.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "update AgBOM"
	var full error
	err := s.stateTx(ctx, what, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockAgBOM, u.Tenant+"/"+u.Agent); err != nil {
			return err
		}
		count := func() (n int, err error) {
			err = tx.QueryRow(ctx, `SELECT count(*) FROM agbom_components WHERE tenant = $1 AND agent = $2`, pgArgs(u.Tenant, u.Agent)...).Scan(&n)
			return n, err
		}
		before, err := count()
		if err != nil {
			return err
		}
		if u.Replace {
			if _, err := tx.Exec(ctx, `DELETE FROM agbom_components WHERE tenant = $1 AND agent = $2 AND source = $3`, pgArgs(u.Tenant, u.Agent, u.Source)...); err != nil {
				return err
			}
		}
		if len(u.Remove) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM agbom_components WHERE tenant = $1 AND agent = $2 AND id = ANY($3::text[])`, pgArgs(u.Tenant, u.Agent, u.Remove)...); err != nil {
				return err
			}
		}
		for _, c := range u.Put {
			if _, err := tx.Exec(ctx, `INSERT INTO agbom_components (tenant, agent, id, type, source, doc, updated)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (tenant, agent, id) DO UPDATE SET type = excluded.type, source = excluded.source,
					doc = excluded.doc, updated = excluded.updated`,
				pgArgs(u.Tenant, u.Agent, c.ID, c.Type, u.Source, string(c.Doc), toUS(u.At))...); err != nil {
				return err
			}
		}
		after, err := count()
		if err != nil {
			return err
		}
		if after > agbom.MaxComponents {
			full = fmt.Errorf("%w: agent %q would have %d components (at most %d)", agbom.ErrFull, u.Agent, after, agbom.MaxComponents)
			return errBound
		}
		if before == 0 && after > 0 {
			if err := xactLock(ctx, tx, lockAgents, ""); err != nil {
				return err
			}
			var agents int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT DISTINCT tenant, agent FROM agbom_components) a`).Scan(&agents); err != nil {
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
	if err != nil {
		return stateErr(ctx, what, err)
	}
	return nil
}

// AgBOM returns the agent's components ordered by id, or agbom.ErrNoAgBOM.
func (s *Store) AgBOM(ctx context.Context, tenant, agent string) ([]agbom.StoredComponent, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "read AgBOM"
	rows, err := s.statePool().Query(ctx, `SELECT id, type, source, doc, updated FROM agbom_components
		WHERE tenant = $1 AND agent = $2 ORDER BY id`, pgArgs(tenant, agent)...)
	if err != nil {
		return nil, stateErr(ctx, what, err)
	}
	defer rows.Close()
	var out []agbom.StoredComponent
	for rows.Next() {
		var c agbom.StoredComponent
		var doc string
		var updated int64
		if err := rows.Scan(&c.ID, &c.Type, &c.Source, &doc, &updated); err != nil {
			return nil, stateErr(ctx, what, err)
		}
		c.Doc, c.Updated = []byte(doc), fromUS(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, stateErr(ctx, what, err)
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
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "list AgBOM agents"
	q := `SELECT tenant, agent, count(*), max(updated) FROM agbom_components`
	args := []any{limit}
	if !all {
		q += ` WHERE tenant = $2`
		args = append(args, tenant)
	}
	q += ` GROUP BY tenant, agent ORDER BY tenant, agent LIMIT $1`
	rows, err := s.statePool().Query(ctx, q, pgArgs(args...)...)
	if err != nil {
		return nil, stateErr(ctx, what, err)
	}
	defer rows.Close()
	var out []agbom.Agent
	for rows.Next() {
		var a agbom.Agent
		var updated int64
		if err := rows.Scan(&a.Tenant, &a.ID, &a.Components, &updated); err != nil {
			return nil, stateErr(ctx, what, err)
		}
		a.Updated = fromUS(updated)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, stateErr(ctx, what, err)
	}
	return out, nil
}

// ToolPins returns the server's pins ordered by name.
func (s *Store) ToolPins(ctx context.Context, server string) ([]agbom.ToolPin, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "read tool pins"
	rows, err := s.statePool().Query(ctx, `SELECT name, description, input_schema, hash, pinned FROM mcp_tool_pins
		WHERE server = $1 ORDER BY name`, pgArgs(server)...)
	if err != nil {
		return nil, stateErr(ctx, what, err)
	}
	defer rows.Close()
	out := []agbom.ToolPin{}
	for rows.Next() {
		p := agbom.ToolPin{Server: server}
		var schema string
		var pinned int64
		if err := rows.Scan(&p.Name, &p.Description, &schema, &p.Hash, &pinned); err != nil {
			return nil, stateErr(ctx, what, err)
		}
		if schema != "" {
			p.InputSchema = []byte(schema)
		}
		p.Pinned = fromUS(pinned)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, stateErr(ctx, what, err)
	}
	return out, nil
}

// PinTools creates, replaces and drops the server's pins in one
// transaction.
func (s *Store) PinTools(ctx context.Context, server string, put []agbom.ToolPin, remove []string) error {
	if err := agbom.CheckToolPins(server, put); err != nil {
		return err
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "pin tools"
	var full error
	err := s.stateTx(ctx, what, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockPins, server); err != nil {
			return err
		}
		if len(remove) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM mcp_tool_pins WHERE server = $1 AND name = ANY($2::text[])`, pgArgs(server, remove)...); err != nil {
				return err
			}
		}
		for _, p := range put {
			if _, err := tx.Exec(ctx, `INSERT INTO mcp_tool_pins (server, name, description, input_schema, hash, pinned)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (server, name) DO UPDATE SET description = excluded.description,
					input_schema = excluded.input_schema, hash = excluded.hash, pinned = excluded.pinned`,
				pgArgs(server, p.Name, p.Description, string(p.InputSchema), p.Hash, toUS(p.Pinned))...); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM mcp_tool_pins WHERE server = $1`, pgArgs(server)...).Scan(&n); err != nil {
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
	if err != nil {
		return stateErr(ctx, what, err)
	}
	return nil
}
