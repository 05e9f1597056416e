package agbom

import (
	"net/url"

	"github.com/wardenhq/warden"
)

// MCPServerID and MCPToolID are the component ids of what the MCP gateway
// observes: "urn:mcp:<server>" and "urn:mcp:<server>:tool:<name>"
// (path-escaped).
func MCPServerID(server string) string { return "urn:mcp:" + url.PathEscape(server) }

// MCPToolID is the component id of a tool of an MCP server.
func MCPToolID(server, tool string) string {
	return MCPServerID(server) + ":tool:" + url.PathEscape(tool)
}

// MCPObservation is the AgBOM update of one tools/list answer of server
// (reached at endpoint, "" when unknown): the server, with the tools
// listed, and one tool component per listed tool with its pin state —
// pinned holds the pinned hash of each pinned tool. removed names tools
// the answer no longer lists (dropped). The caller sets Tenant, Agent and
// At.
func MCPObservation(server, endpoint string, listed []warden.ToolDef, pinned map[string]string, removed []string) *Update {
	u := &Update{Source: SourceMCP}
	srv := &Component{ID: MCPServerID(server), Type: TypeMCPServer, Name: server, Endpoint: endpoint,
		MCPServerFields: &MCPServerFields{Tools: []string{}}}
	for _, t := range listed {
		id := MCPToolID(server, t.Name)
		srv.MCPServerFields.Tools = append(srv.MCPServerFields.Tools, id)
		pin := &Pin{Observed: t.Hash, Hash: pinned[t.Name]}
		switch {
		case pin.Hash == "":
			pin.State = "added"
		case pin.Hash == t.Hash:
			pin.State = "pinned"
		default:
			pin.State = "changed"
		}
		c := &Component{ID: id, Type: TypeTool, Name: t.Name, Provider: server, Description: t.Description,
			ToolFields: &ToolFields{Capability: "mcp.tool"}, Pin: pin,
			RegistrationProvenance: map[string]any{"origin": "tool_output", "source_id": "mcp:" + server + ":tools/list"}}
		if sc, err := c.Stored(); err == nil {
			u.Put = append(u.Put, sc)
		}
	}
	if sc, err := srv.Stored(); err == nil {
		u.Put = append([]StoredComponent{sc}, u.Put...)
	}
	for _, n := range removed {
		u.Remove = append(u.Remove, MCPToolID(server, n))
	}
	return u
}

// A2APeerID is the component id of an A2A agent the A2A gateway relays:
// "urn:a2a:<name>" (path-escaped).
func A2APeerID(name string) string { return "urn:a2a:" + url.PathEscape(name) }

// A2AObservation is the AgBOM update of an agent card the A2A gateway
// fetched for the agent configured as name (reached at endpoint, without
// credentials; cardURL where the card was found): one a2a_peer component
// with the card's name, version, provider organization and protocol
// version. The caller sets Tenant, Agent and At.
func A2AObservation(name, endpoint, cardURL string, card map[string]any) *Update {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	c := &Component{ID: A2APeerID(name), Type: TypeA2APeer, Name: str(card, "name"), Version: str(card, "version"),
		Description: str(card, "description"), Endpoint: endpoint,
		A2APeerFields:          &A2APeerFields{ProtocolVersion: str(card, "protocolVersion"), AgentCardRef: cardURL},
		RegistrationProvenance: map[string]any{"origin": "tool_output", "source_id": "a2a:" + name + ":agent-card"}}
	if c.Name == "" {
		c.Name = name
	}
	if p, ok := card["provider"].(map[string]any); ok {
		c.Provider = str(p, "organization")
	}
	if c.A2APeerFields.ProtocolVersion == "" { // A2A 1.0 names it per interface
		if ifs, ok := card["supportedInterfaces"].([]any); ok && len(ifs) > 0 {
			if m, ok := ifs[0].(map[string]any); ok {
				c.A2APeerFields.ProtocolVersion = str(m, "protocolVersion")
			}
		}
	}
	if c.A2APeerFields.ProtocolVersion == "" {
		c.A2APeerFields.ProtocolVersion = "unknown"
	}
	u := &Update{Source: SourceA2A}
	if sc, err := c.Stored(); err == nil {
		u.Put = append(u.Put, sc)
	}
	return u
}
