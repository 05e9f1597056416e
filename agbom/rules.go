package agbom

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Rows is what a backend keeps of the AgBOMs and the tool pins: rows,
// which it moves as Rules decides. Lists come in any order.
type Rows interface {
	// Components returns the agent's components.
	Components(ctx context.Context, tenant, agent string) ([]StoredComponent, error)
	// Agents returns the agents of tenant (of every tenant when all) with
	// their count of components and latest update; it may stop after the
	// first limit in (tenant, id) order.
	Agents(ctx context.Context, tenant string, all bool, limit int) ([]Agent, error)
	// Pins returns the server's pins.
	Pins(ctx context.Context, server string) ([]ToolPin, error)
	// ChangeComponents calls fn with the source of each of the agent's
	// components, by id, and with agents, which counts the agents with a
	// component; then, atomically, it deletes the components fn drops and
	// creates or replaces (by id) those it puts. fn's error changes nothing
	// and is returned as it is. The changes of one agent take turns, also
	// across the processes sharing the rows, and so do the counts.
	ChangeComponents(ctx context.Context, tenant, agent string,
		fn func(have map[string]string, agents func() (int, error)) (drop []string, put []StoredComponent, err error)) error
	// ChangePins is ChangeComponents for the server's pins, by name, fn
	// given the hash of each.
	ChangePins(ctx context.Context, server string,
		fn func(have map[string]string) (drop []string, put []ToolPin, err error)) error
}

// Rules is the Store that keeps the AgBOMs and the tool pins in Rows: the
// checks, the bounds and the replace and remove rules of every backend,
// written once. Times are kept to the microsecond, in UTC.
type Rules struct{ Rows Rows }

var _ Store = Rules{}

// UpdateAgBOM implements Store.
func (r Rules) UpdateAgBOM(ctx context.Context, u *Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	put, ids := make([]StoredComponent, len(u.Put)), make([]string, len(u.Put))
	for i, c := range u.Put {
		c.Source, c.Updated = u.Source, micro(u.At)
		put[i], ids[i] = c, c.ID
	}
	return r.Rows.ChangeComponents(ctx, u.Tenant, u.Agent, func(have map[string]string, agents func() (int, error)) ([]string, []StoredComponent, error) {
		next := maps.Clone(have)
		maps.DeleteFunc(next, func(_, src string) bool { return u.Replace && src == u.Source })
		drop := apply(have, next, u.Remove, ids, u.Source)
		if len(next) > MaxComponents {
			return nil, nil, fmt.Errorf("%w: agent %q would have %d components (at most %d)", ErrFull, u.Agent, len(next), MaxComponents)
		}
		if len(have) == 0 && len(next) > 0 {
			if n, err := agents(); err != nil || n >= MaxAgents {
				return nil, nil, cmp.Or(err, fmt.Errorf("%w: %d agents have an AgBOM (at most %d)", ErrFull, n, MaxAgents))
			}
		}
		return drop, put, nil
	})
}

// PinTools implements Store.
func (r Rules) PinTools(ctx context.Context, server string, put []ToolPin, remove []string) error {
	if err := CheckToolPins(server, put); err != nil {
		return err
	}
	pins, names := make([]ToolPin, len(put)), make([]string, len(put))
	for i, p := range put {
		p.Server, p.Pinned = server, micro(p.Pinned)
		pins[i], names[i] = p, p.Name
	}
	return r.Rows.ChangePins(ctx, server, func(have map[string]string) ([]string, []ToolPin, error) {
		next := maps.Clone(have)
		drop := apply(have, next, remove, names, "")
		if len(next) > MaxToolPins {
			return nil, nil, fmt.Errorf("%w: MCP server %q would have %d pinned tools (at most %d)", ErrFull, server, len(next), MaxToolPins)
		}
		return drop, pins, nil
	})
}

// apply deletes remove from next and adds put (as v), and returns the keys
// of have that next no longer holds: the rows to delete.
func apply(have, next map[string]string, remove, put []string, v string) (drop []string) {
	for _, k := range remove {
		delete(next, k)
	}
	for _, k := range put {
		next[k] = v
	}
	for k := range have {
		if _, ok := next[k]; !ok {
			drop = append(drop, k)
		}
	}
	return drop
}

// AgBOM implements Store.
func (r Rules) AgBOM(ctx context.Context, tenant, agent string) ([]StoredComponent, error) {
	cs, err := r.Rows.Components(ctx, tenant, agent)
	if err == nil && len(cs) == 0 {
		err = fmt.Errorf("%w: %q", ErrNoAgBOM, agent)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cs, func(a, b StoredComponent) int { return strings.Compare(a.ID, b.ID) })
	return cs, nil
}

// AgBOMAgents implements Store.
func (r Rules) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]Agent, error) {
	if limit <= 0 {
		limit = MaxAgents
	}
	as, err := r.Rows.Agents(ctx, tenant, all, limit)
	slices.SortFunc(as, func(a, b Agent) int {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.ID, b.ID))
	})
	return as[:min(len(as), limit)], err
}

// ToolPins implements Store; no pins is an empty slice.
func (r Rules) ToolPins(ctx context.Context, server string) ([]ToolPin, error) {
	ps, err := r.Rows.Pins(ctx, server)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ps, func(a, b ToolPin) int { return strings.Compare(a.Name, b.Name) })
	return append([]ToolPin{}, ps...), nil
}

// micro is t as a store keeps it: to the microsecond, in UTC.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }
