package agbom

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// StoredComponent is one component of an agent's AgBOM (ACS-Inspect, the
// Agent Bill of Materials): a model, tool, MCP server, A2A peer, knowledge
// source, memory store, agent capability or skill. The store keeps the
// canonical component (ACS agbom/component.json) as JSON in Doc and reads
// only ID, Type and Source; package agbom gives Doc its shape.
type StoredComponent struct {
	ID   string `json:"id"`   // the canonical component id, unique within the agent's AgBOM
	Type string `json:"type"` // the canonical type: model, tool, mcp_server, ...
	// Source is who told warden of the component: SourceACS (an
	// agbom/snapshot or agbom/changed), SourceMCP (a tools/list answer
	// through the MCP gateway) or SourceA2A (an agent card through the
	// A2A gateway).
	Source  string          `json:"source"`
	Doc     json.RawMessage `json:"component"` // the canonical component, a JSON object
	Updated time.Time       `json:"updated"`
}

// The sources of AgBOM components.
const (
	SourceACS = "acs"
	SourceMCP = "mcp"
	SourceA2A = "a2a"
)

// Update is one change to an agent's AgBOM, applied atomically.
type Update struct {
	Tenant string // the caller's tenant ("" for none)
	Agent  string // the agent id; required
	// Replace drops every component of Source before Put is applied (an
	// agbom/snapshot replaces what the agent declared; a full tools/list
	// replaces what the gateway saw of that server — Remove names those).
	Replace bool
	Source  string // the source of Put and of what Replace drops
	Put     []StoredComponent
	Remove  []string // component ids to drop, whatever their source
	At      time.Time
}

// Agent is one agent with an AgBOM, as listed.
type Agent struct {
	Tenant     string    `json:"tenant"`
	ID         string    `json:"id"`
	Components int       `json:"components"`
	Updated    time.Time `json:"updated"`
}

// ToolPin is the pinned definition of one tool of an MCP server: what the
// first tools/list of the server (or the last approved change) said. Hash
// is the lowercase hex SHA-256 of the RFC 8785 (JCS) form of the object
// {"name", "description", "inputSchema"} (absent members left out).
type ToolPin struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Hash        string          `json:"hash"`
	Pinned      time.Time       `json:"pinned"`
}

// Bounds of a Store (documented in docs/agbom.md).
const (
	// MaxComponents bounds the components of one agent.
	MaxComponents = 1000
	// MaxAgents bounds the agents with an AgBOM, all tenants together.
	MaxAgents = 10000
	// MaxToolPins bounds the pinned tools of one MCP server.
	MaxToolPins = 1000
	// MaxDoc bounds one component's canonical JSON, in bytes.
	MaxDoc = 64 << 10
)

// Errors of a Store.
var (
	// ErrNoAgBOM: no AgBOM for that agent (in that tenant).
	ErrNoAgBOM = errors.New("warden: no AgBOM for that agent")
	// ErrFull: the update would pass MaxComponents,
	// MaxAgents or MaxToolPins (nothing is written), or a component
	// is over MaxDoc.
	ErrFull = errors.New("warden: AgBOM bound reached")
)

// Store keeps the AgBOM of every agent and the MCP tool pins durably,
// beside the trace: Rules over a backend's Rows (storetest.RunAgBOM is the
// contract). Every change is atomic.
type Store interface {
	// UpdateAgBOM applies u: with Replace, the agent's components of
	// u.Source are dropped; then u.Remove are dropped and u.Put are
	// created or replaced (by id). ErrFull when the result would pass
	// a bound, and nothing is written. An update leaving the agent no
	// component forgets the agent.
	UpdateAgBOM(ctx context.Context, u *Update) error
	// AgBOM returns the agent's components, ordered by id, or ErrNoAgBOM.
	AgBOM(ctx context.Context, tenant, agent string) ([]StoredComponent, error)
	// AgBOMAgents lists the agents of tenant, ordered by id; all tenants'
	// (ordered by tenant, then id) when all is set. At most limit (<= 0:
	// MaxAgents).
	AgBOMAgents(ctx context.Context, tenant string, all bool, limit int) ([]Agent, error)
	// ToolPins returns the server's pinned tools, ordered by name (none:
	// an empty slice, no error).
	ToolPins(ctx context.Context, server string) ([]ToolPin, error)
	// PinTools creates or replaces the server's pins in put (by name) and
	// drops those named in remove, atomically; ErrFull when the
	// server would hold more than MaxToolPins (nothing is written).
	PinTools(ctx context.Context, server string, put []ToolPin, remove []string) error
}

// Check validates u as Rules does before writing: an agent, and
// components with an id, a type and a JSON object of at most MaxDoc
// bytes (ErrFull past it).
func (u *Update) Check() error {
	if u == nil || u.Agent == "" {
		return errors.New("warden: AgBOM update has no agent")
	}
	for _, c := range u.Put {
		doc := bytes.TrimSpace(c.Doc)
		switch {
		case c.ID == "":
			return errors.New("warden: AgBOM component has no id")
		case c.Type == "":
			return fmt.Errorf("warden: AgBOM component %q has no type", c.ID)
		case len(c.Doc) > MaxDoc:
			return fmt.Errorf("%w: component %q is %d bytes (at most %d)", ErrFull, c.ID, len(c.Doc), MaxDoc)
		case len(doc) == 0 || doc[0] != '{' || !json.Valid(doc):
			return fmt.Errorf("warden: AgBOM component %q: its document is not a JSON object", c.ID)
		}
	}
	return nil
}

// CheckToolPins validates pins as Rules does before writing: a
// server, and a name and a hash on each.
func CheckToolPins(server string, put []ToolPin) error {
	if server == "" {
		return errors.New("warden: tool pins have no server")
	}
	for _, p := range put {
		if p.Name == "" || p.Hash == "" {
			return fmt.Errorf("warden: a tool pin of MCP server %q has no name or no hash", server)
		}
	}
	return nil
}
