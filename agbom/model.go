// Package agbom keeps the AgBOM (Agent Bill of Materials, ACS-Inspect) of
// every agent: the canonical component graph (ACS agbom/component.json)
// built from the agent's agbom/snapshot and agbom/changed steps and from
// what the gateways observe (MCP tools/list answers), stored through a
// Store, and serialized as CycloneDX 1.6 JSON (cyclonedx.go)
// or SPDX 3.0 JSON-LD (spdx.go), deterministically.
package agbom

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The canonical component types (ACS v0.1.0; skill from the Inspect
// README).
const (
	TypeModel           = "model"
	TypeMCPServer       = "mcp_server"
	TypeA2APeer         = "a2a_peer"
	TypeTool            = "tool"
	TypeKnowledgeSource = "knowledge_source"
	TypeMemoryStore     = "memory_store"
	TypeAgentCapability = "agent_capability"
	TypeSkill           = "skill"
)

var types = map[string]bool{TypeModel: true, TypeMCPServer: true, TypeA2APeer: true, TypeTool: true,
	TypeKnowledgeSource: true, TypeMemoryStore: true, TypeAgentCapability: true, TypeSkill: true}

// Component is one canonical AgBOM component. Unknown members of the
// canonical JSON are kept in Extra (and serialized as acs: properties).
type Component struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	Version     string `json:"version,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Endpoint    string `json:"endpoint,omitempty"`
	Description string `json:"description,omitempty"`
	// RegistrationProvenance is who declared the component (ACS §7
	// Provenance: origin, source_id, ...).
	RegistrationProvenance map[string]any `json:"registration_provenance,omitempty"`

	ModelFields           *ModelFields           `json:"model_fields,omitempty"`
	MCPServerFields       *MCPServerFields       `json:"mcp_server_fields,omitempty"`
	A2APeerFields         *A2APeerFields         `json:"a2a_peer_fields,omitempty"`
	ToolFields            *ToolFields            `json:"tool_fields,omitempty"`
	KnowledgeSourceFields *KnowledgeSourceFields `json:"knowledge_source_fields,omitempty"`
	MemoryStoreFields     *MemoryStoreFields     `json:"memory_store_fields,omitempty"`
	AgentCapabilityFields *RefFields             `json:"agent_capability_fields,omitempty"`
	SkillFields           *RefFields             `json:"skill_fields,omitempty"`

	// Pin is warden's pin state of a tool an MCP server lists (gateway
	// observations only).
	Pin *Pin `json:"warden_pin,omitempty"`

	// Source and Updated are the store's (not part of the canonical JSON).
	Source  string `json:"-"`
	Updated string `json:"-"`
}

// ModelFields are a model's type-specific fields.
type ModelFields struct {
	ContextWindow int64          `json:"context_window"`
	Args          map[string]any `json:"args,omitempty"`
}

// MCPServerFields are an MCP server's: the ids of its tools.
type MCPServerFields struct {
	Tools []string `json:"tools"`
}

// A2APeerFields are an A2A peer's.
type A2APeerFields struct {
	ProtocolVersion string `json:"protocol_version"`
	AgentCardRef    string `json:"agent_card_ref,omitempty"`
}

// ToolFields are a tool's: its abstract capability.
type ToolFields struct {
	Capability string `json:"capability"`
}

// KnowledgeSourceFields are a knowledge source's.
type KnowledgeSourceFields struct {
	SourceType string `json:"source_type"`
	SchemaRef  string `json:"schema_ref,omitempty"`
}

// MemoryStoreFields are a memory store's.
type MemoryStoreFields struct {
	Scope      string `json:"scope"`
	StoreType  string `json:"store_type"`
	Path       string `json:"path,omitempty"`
	WindowSize *int64 `json:"window_size,omitempty"`
}

// RefFields are an agent capability's or a skill's: a description and the
// ids of the components it uses.
type RefFields struct {
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	MCPServers  []string `json:"mcp_servers,omitempty"`
	A2APeers    []string `json:"a2a_peers,omitempty"`
	Models      []string `json:"models,omitempty"`
}

// Pin is the pin state of an MCP tool as the gateway last saw it.
type Pin struct {
	// State: "pinned" (the listed definition is the pinned one),
	// "changed" (it differs and is not approved), "added" (not pinned,
	// not approved).
	State string `json:"state"`
	// Hash is the pinned definition's hash ("" when not pinned);
	// Observed the hash of the definition last listed.
	Hash     string `json:"hash,omitempty"`
	Observed string `json:"observed"`
}

// Parse reads one canonical component: an object with a string id and a
// known type, at most MaxDoc bytes. Errors name the problem.
func Parse(raw json.RawMessage) (*Component, error) {
	if len(raw) > MaxDoc {
		return nil, fmt.Errorf("component is %d bytes (at most %d)", len(raw), MaxDoc)
	}
	var c Component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("component: %v", err)
	}
	if c.ID == "" {
		return nil, fmt.Errorf("component has no id")
	}
	if !types[c.Type] {
		return nil, fmt.Errorf("component %q: unknown type %q (want one of %s)", c.ID, c.Type, strings.Join(typeNames(), ", "))
	}
	return &c, nil
}

func typeNames() []string {
	out := make([]string, 0, len(types))
	for t := range types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Stored turns c into the store's form.
func (c *Component) Stored() (StoredComponent, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return StoredComponent{}, err
	}
	return StoredComponent{ID: c.ID, Type: c.Type, Doc: b}, nil
}

// Document is one agent's AgBOM as read from the store: its components,
// ordered by id.
type Document struct {
	Tenant     string
	Agent      string
	Components []*Component
	// Updated is the newest component's time, RFC 3339 UTC ("" when none):
	// the serializations' timestamp, so the same AgBOM always serializes
	// to the same bytes.
	Updated string
}

// FromStored builds the Document of an agent's stored components (as
// Store.AgBOM returns them). A component whose JSON no longer parses
// is an error naming it.
func FromStored(tenant, agent string, cs []StoredComponent) (*Document, error) {
	d := &Document{Tenant: tenant, Agent: agent}
	for _, sc := range cs {
		c, err := Parse(sc.Doc)
		if err != nil {
			return nil, fmt.Errorf("stored component %q: %v", sc.ID, err)
		}
		c.ID, c.Source = sc.ID, sc.Source
		if !sc.Updated.IsZero() {
			c.Updated = sc.Updated.UTC().Format("2006-01-02T15:04:05Z")
			if c.Updated > d.Updated {
				d.Updated = c.Updated
			}
		}
		d.Components = append(d.Components, c)
	}
	sort.Slice(d.Components, func(i, j int) bool { return d.Components[i].ID < d.Components[j].ID })
	return d, nil
}
