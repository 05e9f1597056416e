package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
)

// Mem is an audit.CursorStore and a registry.Store too: registry.Rules
// over cursors and instances in maps, outliving Close like the records.

var (
	_ audit.CursorStore = (*Mem)(nil)
	_ registry.Store    = (*Mem)(nil)
	_ audit.Readier     = (*Mem)(nil)
	_ registry.Rows     = memFleetRows{}
)

type memFleet struct {
	cursors   map[string]string
	instances map[string]registry.Instance
}

// fleetRules is the registry.Store and audit.CursorStore a Mem embeds
// (newFleet).
type fleetRules = registry.Rules

func newFleet(m *Mem) fleetRules { return registry.Rules{Rows: memFleetRows{m}} }

// memFleetRows is a Mem's registry.Rows.
type memFleetRows struct{ m *Mem }

// do runs fn holding m's data locked; it fails after Close.
func (r memFleetRows) do(ctx context.Context, fn func(f *memFleet)) error {
	unlock, err := r.m.lockData(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	if r.m.d.flt == nil {
		r.m.d.flt = &memFleet{cursors: map[string]string{}, instances: map[string]registry.Instance{}}
	}
	fn(r.m.d.flt)
	return nil
}

// PutInstance keeps in.
func (r memFleetRows) PutInstance(ctx context.Context, in registry.Instance) error {
	return r.do(ctx, func(f *memFleet) { f.instances[in.ID] = in })
}

// Instances returns every instance.
func (r memFleetRows) Instances(ctx context.Context) (out []registry.Instance, err error) {
	err = r.do(ctx, func(f *memFleet) { out = slices.Collect(maps.Values(f.instances)) })
	return out, err
}

// DeleteInstances drops the instances last seen before cutoff.
func (r memFleetRows) DeleteInstances(ctx context.Context, cutoff time.Time) (n int, err error) {
	err = r.do(ctx, func(f *memFleet) {
		n = len(f.instances)
		maps.DeleteFunc(f.instances, func(_ string, in registry.Instance) bool { return in.LastSeen.Before(cutoff) })
		n -= len(f.instances)
	})
	return n, err
}

// Cursor returns the id stored under name, "" for none.
func (r memFleetRows) Cursor(ctx context.Context, name string) (id string, err error) {
	err = r.do(ctx, func(f *memFleet) { id = f.cursors[name] })
	return id, err
}

// PutCursor stores id under name.
func (r memFleetRows) PutCursor(ctx context.Context, name, id string, _ time.Time) error {
	return r.do(ctx, func(f *memFleet) { f.cursors[name] = id })
}

// Ready is nil while m is open and Err is unset.
func (m *Mem) Ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("closed")
	}
	return m.Err
}
