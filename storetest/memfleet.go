package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
)

// Mem is a audit.CursorStore and a registry.Store too: cursors and
// instances in maps, outliving Close like the records.

var (
	_ audit.CursorStore = (*Mem)(nil)
	_ registry.Store    = (*Mem)(nil)
	_ audit.Readier     = (*Mem)(nil)
)

type memFleet struct {
	cursors   map[string]string
	instances map[string]registry.Instance
}

// fleet returns m's fleet tables; the caller holds m.d.mu.
func (m *Mem) fleet() *memFleet {
	if m.d.flt == nil {
		m.d.flt = &memFleet{cursors: map[string]string{}, instances: map[string]registry.Instance{}}
	}
	return m.d.flt
}

// write runs fn holding the data's lock, unless m is closed or ctx done.
func (m *Mem) fleetWrite(ctx context.Context, fn func(f *memFleet)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("closed")
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	fn(m.fleet())
	return nil
}

// StreamCursor returns the id stored under name, "" for none.
func (m *Mem) StreamCursor(ctx context.Context, name string) (string, error) {
	var id string
	err := m.fleetWrite(ctx, func(f *memFleet) { id = f.cursors[name] })
	return id, err
}

// SetStreamCursor stores id under name.
func (m *Mem) SetStreamCursor(ctx context.Context, name, id string) error {
	if name == "" || id == "" {
		return errors.New("storetest: a stream cursor needs a name and a record id")
	}
	return m.fleetWrite(ctx, func(f *memFleet) { f.cursors[name] = id })
}

// Heartbeat stores a copy of in, times truncated to microseconds as a
// database would keep them.
func (m *Mem) Heartbeat(ctx context.Context, in registry.Instance) error {
	if err := registry.Valid(in); err != nil {
		return err
	}
	in.Started = in.Started.Truncate(time.Microsecond).UTC()
	in.LastSeen = in.LastSeen.Truncate(time.Microsecond).UTC()
	return m.fleetWrite(ctx, func(f *memFleet) { f.instances[in.ID] = in })
}

// Instances returns the instances ordered by ID.
func (m *Mem) Instances(ctx context.Context) ([]registry.Instance, error) {
	out := []registry.Instance{}
	err := m.fleetWrite(ctx, func(f *memFleet) {
		for _, in := range f.instances {
			out = append(out, in)
		}
	})
	slices.SortFunc(out, func(a, b registry.Instance) int { return strings.Compare(a.ID, b.ID) })
	return out, err
}

// ForgetInstances deletes the instances last seen before cutoff.
func (m *Mem) ForgetInstances(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	cutoff = cutoff.Truncate(time.Microsecond) // as stored
	err := m.fleetWrite(ctx, func(f *memFleet) {
		for id, in := range f.instances {
			if in.LastSeen.Before(cutoff) {
				delete(f.instances, id)
				n++
			}
		}
	})
	return n, err
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
