package storetest

import (
	"bytes"
	"context"

	"github.com/wardenhq/warden/agbom"
)

// Mem is also an in-memory agbom.Store: agbom.Rules over rows in maps
// (TestMemAgBOM runs RunAgBOM against it), under one mutex. The rows
// outlive Close (Reopen sees them); a closed Mem's methods fail.

var _ agbom.Store = (*Mem)(nil)

// memAgBOM are a Mem's AgBOM rows: components by agent (tenant, id) then
// id, pins by server then name; under memData.mu.
type memAgBOM struct {
	agents map[[2]string]map[string]agbom.StoredComponent
	pins   map[string]map[string]agbom.ToolPin
}

// memBOMRows is a Mem's agbom.Rows.
type memBOMRows struct{ m *Mem }

// do runs fn holding m's data locked; it fails after Close or when ctx is
// done.
func (r memBOMRows) do(ctx context.Context, fn func(b *memAgBOM) error) error {
	unlock, err := r.m.lockData(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	if r.m.d.bom == nil {
		r.m.d.bom = &memAgBOM{agents: map[[2]string]map[string]agbom.StoredComponent{}, pins: map[string]map[string]agbom.ToolPin{}}
	}
	return fn(r.m.d.bom)
}

// Components implements agbom.Rows.
func (r memBOMRows) Components(ctx context.Context, tenant, agent string) (out []agbom.StoredComponent, err error) {
	err = r.do(ctx, func(b *memAgBOM) error {
		for _, c := range b.agents[[2]string{tenant, agent}] {
			c.Doc = bytes.Clone(c.Doc)
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// Agents implements agbom.Rows: all of them.
func (r memBOMRows) Agents(ctx context.Context, tenant string, all bool, _ int) (out []agbom.Agent, err error) {
	err = r.do(ctx, func(b *memAgBOM) error {
		for k, cs := range b.agents {
			a := agbom.Agent{Tenant: k[0], ID: k[1], Components: len(cs)}
			for _, c := range cs {
				if c.Updated.After(a.Updated) {
					a.Updated = c.Updated
				}
			}
			if all || a.Tenant == tenant {
				out = append(out, a)
			}
		}
		return nil
	})
	return out, err
}

// Pins implements agbom.Rows.
func (r memBOMRows) Pins(ctx context.Context, server string) (out []agbom.ToolPin, err error) {
	err = r.do(ctx, func(b *memAgBOM) error {
		for _, p := range b.pins[server] {
			p.InputSchema = bytes.Clone(p.InputSchema)
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// ChangeComponents implements agbom.Rows.
func (r memBOMRows) ChangeComponents(ctx context.Context, tenant, agent string,
	fn func(map[string]string, func() (int, error)) ([]string, []agbom.StoredComponent, error)) error {
	return r.do(ctx, func(b *memAgBOM) error {
		k, have := [2]string{tenant, agent}, map[string]string{}
		for id, c := range b.agents[k] {
			have[id] = c.Source
		}
		drop, put, err := fn(have, func() (int, error) { return len(b.agents), nil })
		for i := range put {
			put[i].Doc = bytes.Clone(put[i].Doc)
		}
		if err == nil {
			keep(b.agents, k, drop, put, func(c agbom.StoredComponent) string { return c.ID })
		}
		return err
	})
}

// ChangePins implements agbom.Rows.
func (r memBOMRows) ChangePins(ctx context.Context, server string, fn func(map[string]string) ([]string, []agbom.ToolPin, error)) error {
	return r.do(ctx, func(b *memAgBOM) error {
		have := map[string]string{}
		for n, p := range b.pins[server] {
			have[n] = p.Hash
		}
		drop, put, err := fn(have)
		for i := range put {
			put[i].InputSchema = bytes.Clone(put[i].InputSchema)
		}
		if err == nil {
			keep(b.pins, server, drop, put, func(p agbom.ToolPin) string { return p.Name })
		}
		return err
	})
}

// keep drops drop from rows[o] and keeps put, by key, forgetting o when it
// has no row left.
func keep[O comparable, V any](rows map[O]map[string]V, o O, drop []string, put []V, key func(V) string) {
	if rows[o] == nil {
		rows[o] = map[string]V{}
	}
	for _, k := range drop {
		delete(rows[o], k)
	}
	for _, v := range put {
		rows[o][key(v)] = v
	}
	if len(rows[o]) == 0 {
		delete(rows, o)
	}
}

// agbomRules is the agbom.Store a Mem embeds (newAgBOM).
type agbomRules = agbom.Rules

func newAgBOM(m *Mem) agbomRules { return agbom.Rules{Rows: memBOMRows{m}} }
