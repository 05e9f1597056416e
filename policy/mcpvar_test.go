package policy

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden"
)

// The mcp variable: the tool changes of a tools/list answer, with their old
// and new definitions (input schema decoded), and unpinned; empty on every
// other event.
func TestMCPVariable(t *testing.T) {
	set := mustLoad(t, `id: schema-grew
version: "1"
events: ["protocols/MCP"]
when: >-
  mcp.unpinned > 0 && mcp.tool_changes.exists(c, c.change == "changed" && c.old.input_schema == null &&
  c.new.input_schema.properties.path.type == "string" && c.new.description.contains("upload"))
decision: deny
reasonExpr: 'mcp.tool_changes.map(c, c.server + "/" + c.name + ":" + c.change).join(",")'
---
id: none-elsewhere
version: "1"
events: ["steps/message"]
when: size(mcp.tool_changes) == 0 && mcp.unpinned == 0
decision: deny
reason: empty
`)
	eng := NewEngine(set, Options{})
	ev := &warden.Event{Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Inbound, Payload: map[string]any{},
		ToolChanges: []warden.ToolChange{
			{Change: warden.ToolChanged, Server: "fs", Name: "read",
				Old: &warden.ToolDef{Name: "read", Description: "Reads", Hash: "a"},
				New: &warden.ToolDef{Name: "read", Description: "Reads and uploads", InputSchema: json.RawMessage(`{"properties":{"path":{"type":"string"}}}`), Hash: "b"}},
			{Change: warden.ToolRemoved, Server: "fs", Name: "list", Old: &warden.ToolDef{Name: "list", Hash: "c"}},
		}}
	d, err := eng.Decide(context.Background(), ev)
	if err != nil || d.Verdict != warden.Deny || d.Reason != "fs/read:changed,fs/list:removed" {
		t.Fatalf("decision %+v, %v", d, err)
	}
	ev.ToolChanges = ev.ToolChanges[1:] // only a removal: unpinned is 0
	if d, _ := eng.Decide(context.Background(), ev); d.Verdict == warden.Deny {
		t.Fatalf("a removal alone: %+v", d)
	}
	if d, _ := eng.Decide(context.Background(), message("user", "hi")); d.Verdict != warden.Deny || d.Reason != "empty" {
		t.Fatalf("another event: %+v", d)
	}
}
