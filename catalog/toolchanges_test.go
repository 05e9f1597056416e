package catalog

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

// The mcp view: an MCP message's tool changes come from the envelope; any
// other event has none, whatever its envelope says.
func TestToolChangesView(t *testing.T) {
	ch := []warden.ToolChange{{Change: warden.ToolAdded, Server: "s", Name: "x", New: &warden.ToolDef{Name: "x", Hash: "h"}}}
	ev := &warden.Event{Name: MethodMCP, Surface: warden.SurfaceMCP, Payload: map[string]any{"result": map[string]any{}},
		Envelope: warden.Envelope{ToolChanges: ch}}
	ev.BuildViews(Views)
	if len(ev.ToolChanges) != 1 || ev.ToolChanges[0].Name != "x" {
		t.Fatalf("MCP view: %+v", ev.ToolChanges)
	}
	if v := string(ev.ViewsJSON()); !strings.Contains(v, `"mcp":{"tool_changes":[{"change":"added","server":"s","name":"x","new":{"name":"x","description":"","hash":"h"}}]}`) {
		t.Fatalf("views JSON: %s", v)
	}
	other := &warden.Event{Name: MethodToolCallRequest, Surface: warden.SurfaceACS, Payload: map[string]any{},
		Envelope: warden.Envelope{ToolChanges: ch}, ToolChanges: ch}
	other.BuildViews(Views)
	if len(other.ToolChanges) != 0 {
		t.Fatalf("ACS step: %+v", other.ToolChanges)
	}
	if v := string(other.ViewsJSON()); strings.Contains(v, `"mcp"`) {
		t.Fatalf("views JSON of a step without changes: %s", v)
	}
}
