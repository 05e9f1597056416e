package warden

import "encoding/json"

// ToolDef is one tool definition of an MCP server, as a tools/list answer
// gave it or as it is pinned: its name, description and input schema, and
// Hash, the lowercase hex SHA-256 of the RFC 8785 (JCS) form of the object
// {"name", "description", "inputSchema"} (absent members left out).
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Hash        string          `json:"hash"`
}

// The kinds of a ToolChange.
const (
	ToolChanged = "changed" // the description or the input schema changed
	ToolAdded   = "added"   // a tool the pins do not hold
	ToolRemoved = "removed" // a pinned tool the full list no longer has
)

// ToolChange is one difference between an MCP server's pinned tools and a
// tools/list answer (a "rug-pull" when a tool changes under the agent):
// the MCP gateway puts the changes of an answer in Envelope.ToolChanges,
// and policies read them as mcp.tool_changes. Old is nil for an added
// tool, New nil for a removed one.
type ToolChange struct {
	Change string   `json:"change"` // ToolChanged, ToolAdded or ToolRemoved
	Server string   `json:"server"`
	Name   string   `json:"name"`
	Old    *ToolDef `json:"old,omitempty"`
	New    *ToolDef `json:"new,omitempty"`
}
