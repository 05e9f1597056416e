package tracesql

import (
	"context"

	"github.com/wardenhq/warden/agbom"
)

// AgBOM is agbom.Rows over DB's tables agbom_components, one row per
// component of an agent keyed by (tenant, agent, id), and mcp_tool_pins,
// one row per pinned tool keyed by (server, name). A change is one
// transaction holding the lock of what it bounds (LockAgBOM, LockPins),
// and LockAgents while it counts the agents.
type AgBOM struct{ DB RowDB }

// Components implements agbom.Rows.
func (a AgBOM) Components(ctx context.Context, tenant, agent string) (out []agbom.StoredComponent, err error) {
	var c agbom.StoredComponent
	var doc string
	var us int64
	err = a.DB.Query(ctx, "read AgBOM", `SELECT id, type, source, doc, updated FROM agbom_components
		WHERE tenant = $1 AND agent = $2`, []any{tenant, agent}, []any{&c.ID, &c.Type, &c.Source, &doc, &us}, func() {
		c.Doc, c.Updated = []byte(doc), FromMicro(us)
		out = append(out, c)
	})
	return out, err
}

// Agents implements agbom.Rows: the first limit.
func (a AgBOM) Agents(ctx context.Context, tenant string, all bool, limit int) (out []agbom.Agent, err error) {
	q, args := `SELECT tenant, agent, count(*), max(updated) FROM agbom_components`, []any{limit}
	if !all {
		q, args = q+` WHERE tenant = $2`, append(args, tenant)
	}
	var ag agbom.Agent
	var us int64
	err = a.DB.Query(ctx, "list AgBOM agents", q+` GROUP BY tenant, agent ORDER BY tenant, agent LIMIT $1`,
		args, []any{&ag.Tenant, &ag.ID, &ag.Components, &us}, func() {
			ag.Updated = FromMicro(us)
			out = append(out, ag)
		})
	return out, err
}

// Pins implements agbom.Rows.
func (a AgBOM) Pins(ctx context.Context, server string) (out []agbom.ToolPin, err error) {
	p := agbom.ToolPin{Server: server}
	var schema string
	var us int64
	err = a.DB.Query(ctx, "read tool pins", `SELECT name, description, input_schema, hash, pinned FROM mcp_tool_pins
		WHERE server = $1`, []any{server}, []any{&p.Name, &p.Description, &schema, &p.Hash, &us}, func() {
		p.InputSchema, p.Pinned = nil, FromMicro(us)
		if schema != "" {
			p.InputSchema = []byte(schema)
		}
		out = append(out, p)
	})
	return out, err
}

// ChangeComponents implements agbom.Rows.
func (a AgBOM) ChangeComponents(ctx context.Context, tenant, agent string,
	fn func(map[string]string, func() (int, error)) ([]string, []agbom.StoredComponent, error)) error {
	const what = "update AgBOM"
	return a.DB.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		have, err := lockRead(ctx, db, LockAgBOM, tenant+"/"+agent,
			`SELECT id, source FROM agbom_components WHERE tenant = $1 AND agent = $2`, tenant, agent)
		if err != nil {
			return err
		}
		drop, put, err := fn(have, func() (n int, err error) {
			if err = db.Lock(ctx, LockAgents, ""); err == nil {
				err = db.Query(ctx, what, `SELECT count(*) FROM (SELECT DISTINCT tenant, agent FROM agbom_components) a`,
					nil, []any{&n}, func() {})
			}
			return n, err
		})
		for _, id := range drop {
			if err == nil {
				_, err = db.Exec(ctx, what, `DELETE FROM agbom_components WHERE tenant = $1 AND agent = $2 AND id = $3`, tenant, agent, id)
			}
		}
		for _, c := range put {
			if err == nil {
				_, err = db.Exec(ctx, what, `INSERT INTO agbom_components (tenant, agent, id, type, source, doc, updated)
					VALUES ($1, $2, $3, $4, $5, $6, $7)
					ON CONFLICT (tenant, agent, id) DO UPDATE SET type = excluded.type, source = excluded.source,
						doc = excluded.doc, updated = excluded.updated`,
					tenant, agent, c.ID, c.Type, c.Source, string(c.Doc), Micro(c.Updated))
			}
		}
		return err
	})
}

// ChangePins implements agbom.Rows.
func (a AgBOM) ChangePins(ctx context.Context, server string, fn func(map[string]string) ([]string, []agbom.ToolPin, error)) error {
	const what = "pin tools"
	return a.DB.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		have, err := lockRead(ctx, db, LockPins, server, `SELECT name, hash FROM mcp_tool_pins WHERE server = $1`, server)
		if err != nil {
			return err
		}
		drop, put, err := fn(have)
		for _, n := range drop {
			if err == nil {
				_, err = db.Exec(ctx, what, `DELETE FROM mcp_tool_pins WHERE server = $1 AND name = $2`, server, n)
			}
		}
		for _, p := range put {
			if err == nil {
				_, err = db.Exec(ctx, what, `INSERT INTO mcp_tool_pins (server, name, description, input_schema, hash, pinned)
					VALUES ($1, $2, $3, $4, $5, $6)
					ON CONFLICT (server, name) DO UPDATE SET description = excluded.description,
						input_schema = excluded.input_schema, hash = excluded.hash, pinned = excluded.pinned`,
					server, p.Name, p.Description, string(p.InputSchema), p.Hash, Micro(p.Pinned))
			}
		}
		return err
	})
}

// lockRead takes the lock l of key, then reads the rows of q, two strings
// each, as a map.
func lockRead(ctx context.Context, db RowDB, l Lock, key, q string, args ...any) (map[string]string, error) {
	if err := db.Lock(ctx, l, key); err != nil {
		return nil, err
	}
	m := map[string]string{}
	var k, v string
	err := db.Query(ctx, "read AgBOM", q, args, []any{&k, &v}, func() { m[k] = v })
	return m, err
}
