package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden"
)

// Mem is also an in-memory warden.AgBOMStore with the SQLite store's
// semantics (TestMemAgBOM runs RunAgBOM against it): times in UTC to the
// microsecond, every change atomic under one mutex, the data outliving
// Close (Reopen sees it) while the changing methods fail after Close.

var _ warden.AgBOMStore = (*Mem)(nil)

// memAgBOM are a Mem's AgBOMs, by tenant + "\x00" + agent, and its pins by
// server then tool name; under memData.mu.
type memAgBOM struct {
	agents map[string]map[string]warden.AgBOMComponent
	pins   map[string]map[string]warden.ToolPin
}

func agentKey(tenant, agent string) string { return tenant + "\x00" + agent }

func (m *Mem) bomLocked() *memAgBOM {
	if m.d.bom == nil {
		m.d.bom = &memAgBOM{agents: map[string]map[string]warden.AgBOMComponent{}, pins: map[string]map[string]warden.ToolPin{}}
	}
	return m.d.bom
}

// lockAgBOM locks m's data for a change; it fails after Close.
func (m *Mem) lockAgBOM(ctx context.Context) (*memAgBOM, func(), error) {
	unlock, err := m.lockData(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m.bomLocked(), unlock, nil
}

// UpdateAgBOM applies u atomically (see warden.AgBOMStore).
func (m *Mem) UpdateAgBOM(ctx context.Context, u *warden.AgBOMUpdate) error {
	if err := u.Check(); err != nil {
		return err
	}
	b, unlock, err := m.lockAgBOM(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	key := agentKey(u.Tenant, u.Agent)
	old := b.agents[key]
	next := make(map[string]warden.AgBOMComponent, len(old)+len(u.Put))
	for id, c := range old {
		if !(u.Replace && c.Source == u.Source) {
			next[id] = c
		}
	}
	for _, id := range u.Remove {
		delete(next, id)
	}
	for _, c := range u.Put {
		c.Source, c.Updated = u.Source, usTime(u.At)
		c.Doc = bytes.Clone(c.Doc)
		next[c.ID] = c
	}
	if len(next) > warden.AgBOMMaxComponents {
		return fmt.Errorf("%w: agent %q would have %d components (at most %d)", warden.ErrAgBOMFull, u.Agent, len(next), warden.AgBOMMaxComponents)
	}
	if old == nil && len(next) > 0 && len(b.agents) >= warden.AgBOMMaxAgents {
		return fmt.Errorf("%w: %d agents have an AgBOM (at most %d)", warden.ErrAgBOMFull, len(b.agents), warden.AgBOMMaxAgents)
	}
	if len(next) == 0 {
		delete(b.agents, key)
		return nil
	}
	b.agents[key] = next
	return nil
}

// AgBOM returns the agent's components ordered by id, or warden.ErrNoAgBOM.
func (m *Mem) AgBOM(ctx context.Context, tenant, agent string) ([]warden.AgBOMComponent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	cs, ok := m.bomLocked().agents[agentKey(tenant, agent)]
	if !ok {
		return nil, fmt.Errorf("%w: %q", warden.ErrNoAgBOM, agent)
	}
	out := make([]warden.AgBOMComponent, 0, len(cs))
	for _, c := range cs {
		c.Doc = bytes.Clone(c.Doc)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b warden.AgBOMComponent) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// AgBOMAgents lists the agents with an AgBOM (see warden.AgBOMStore).
func (m *Mem) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]warden.AgBOMAgent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = warden.AgBOMMaxAgents
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	var out []warden.AgBOMAgent
	for key, cs := range m.bomLocked().agents {
		t, id, _ := strings.Cut(key, "\x00")
		if !all && t != tenant {
			continue
		}
		a := warden.AgBOMAgent{Tenant: t, ID: id, Components: len(cs)}
		for _, c := range cs {
			if c.Updated.After(a.Updated) {
				a.Updated = c.Updated
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b warden.AgBOMAgent) int {
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ToolPins returns the server's pins ordered by name.
func (m *Mem) ToolPins(ctx context.Context, server string) ([]warden.ToolPin, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	ps := m.bomLocked().pins[server]
	out := make([]warden.ToolPin, 0, len(ps))
	for _, p := range ps {
		p.InputSchema = bytes.Clone(p.InputSchema)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b warden.ToolPin) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PinTools creates, replaces and drops the server's pins atomically.
func (m *Mem) PinTools(ctx context.Context, server string, put []warden.ToolPin, remove []string) error {
	if err := warden.CheckToolPins(server, put); err != nil {
		return err
	}
	b, unlock, err := m.lockAgBOM(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	next := make(map[string]warden.ToolPin, len(b.pins[server])+len(put))
	for n, p := range b.pins[server] {
		next[n] = p
	}
	for _, n := range remove {
		delete(next, n)
	}
	for _, p := range put {
		p.Server, p.Pinned = server, usTime(p.Pinned)
		p.InputSchema = bytes.Clone(p.InputSchema)
		next[p.Name] = p
	}
	if len(next) > warden.MaxToolPins {
		return fmt.Errorf("%w: MCP server %q would have %d pinned tools (at most %d)", warden.ErrAgBOMFull, server, len(next), warden.MaxToolPins)
	}
	if len(next) == 0 {
		delete(b.pins, server)
		return nil
	}
	b.pins[server] = next
	return nil
}
