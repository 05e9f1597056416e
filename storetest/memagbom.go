package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/agbom"
)

// Mem is also an in-memory agbom.Store with the SQLite store's
// semantics (TestMemAgBOM runs RunAgBOM against it): times in UTC to the
// microsecond, every change atomic under one mutex, the data outliving
// Close (Reopen sees it) while the changing methods fail after Close.

var _ agbom.Store = (*Mem)(nil)

// memAgBOM are a Mem's AgBOMs, by tenant + "\x00" + agent, and its pins by
// server then tool name; under memData.mu.
type memAgBOM struct {
	agents map[string]map[string]agbom.StoredComponent
	pins   map[string]map[string]agbom.ToolPin
}

func agentKey(tenant, agent string) string { return tenant + "\x00" + agent }

func (m *Mem) bomLocked() *memAgBOM {
	if m.d.bom == nil {
		m.d.bom = &memAgBOM{agents: map[string]map[string]agbom.StoredComponent{}, pins: map[string]map[string]agbom.ToolPin{}}
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

// UpdateAgBOM applies u atomically (see agbom.Store).
func (m *Mem) UpdateAgBOM(ctx context.Context, u *agbom.Update) error {
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
	next := make(map[string]agbom.StoredComponent, len(old)+len(u.Put))
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
	if len(next) > agbom.MaxComponents {
		return fmt.Errorf("%w: agent %q would have %d components (at most %d)", agbom.ErrFull, u.Agent, len(next), agbom.MaxComponents)
	}
	if old == nil && len(next) > 0 && len(b.agents) >= agbom.MaxAgents {
		return fmt.Errorf("%w: %d agents have an AgBOM (at most %d)", agbom.ErrFull, len(b.agents), agbom.MaxAgents)
	}
	if len(next) == 0 {
		delete(b.agents, key)
		return nil
	}
	b.agents[key] = next
	return nil
}

// AgBOM returns the agent's components ordered by id, or agbom.ErrNoAgBOM.
func (m *Mem) AgBOM(ctx context.Context, tenant, agent string) ([]agbom.StoredComponent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	cs, ok := m.bomLocked().agents[agentKey(tenant, agent)]
	if !ok {
		return nil, fmt.Errorf("%w: %q", agbom.ErrNoAgBOM, agent)
	}
	out := make([]agbom.StoredComponent, 0, len(cs))
	for _, c := range cs {
		c.Doc = bytes.Clone(c.Doc)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b agbom.StoredComponent) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// AgBOMAgents lists the agents with an AgBOM (see agbom.Store).
func (m *Mem) AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]agbom.Agent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = agbom.MaxAgents
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	var out []agbom.Agent
	for key, cs := range m.bomLocked().agents {
		t, id, _ := strings.Cut(key, "\x00")
		if !all && t != tenant {
			continue
		}
		a := agbom.Agent{Tenant: t, ID: id, Components: len(cs)}
		for _, c := range cs {
			if c.Updated.After(a.Updated) {
				a.Updated = c.Updated
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b agbom.Agent) int {
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
func (m *Mem) ToolPins(ctx context.Context, server string) ([]agbom.ToolPin, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	ps := m.bomLocked().pins[server]
	out := make([]agbom.ToolPin, 0, len(ps))
	for _, p := range ps {
		p.InputSchema = bytes.Clone(p.InputSchema)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b agbom.ToolPin) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PinTools creates, replaces and drops the server's pins atomically.
func (m *Mem) PinTools(ctx context.Context, server string, put []agbom.ToolPin, remove []string) error {
	if err := agbom.CheckToolPins(server, put); err != nil {
		return err
	}
	b, unlock, err := m.lockAgBOM(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	next := make(map[string]agbom.ToolPin, len(b.pins[server])+len(put))
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
	if len(next) > agbom.MaxToolPins {
		return fmt.Errorf("%w: MCP server %q would have %d pinned tools (at most %d)", agbom.ErrFull, server, len(next), agbom.MaxToolPins)
	}
	if len(next) == 0 {
		delete(b.pins, server)
		return nil
	}
	b.pins[server] = next
	return nil
}
