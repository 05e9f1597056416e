package policy

import (
	"encoding/json"

	"github.com/wardenhq/warden"
)

// mcpVar is the CEL variable mcp: {"tool_changes": [...], "unpinned": N},
// one map per warden.ToolChange with change, server, name, and old and new
// (null when absent), each {name, description, input_schema (decoded JSON,
// null when absent), hash}; unpinned counts the changes that are not
// removals (listed tools whose definition is not the pinned one), so a
// condition can test it at a constant cost.
func mcpVar(chs []warden.ToolChange) map[string]any {
	list := make([]any, len(chs))
	unpinned := 0
	for i, c := range chs {
		list[i] = map[string]any{"change": c.Change, "server": c.Server, "name": c.Name,
			"old": toolDefVar(c.Old), "new": toolDefVar(c.New)}
		if c.Change != warden.ToolRemoved {
			unpinned++
		}
	}
	return map[string]any{"tool_changes": list, "unpinned": unpinned}
}

func toolDefVar(d *warden.ToolDef) any {
	if d == nil {
		return nil
	}
	var schema any
	if len(d.InputSchema) > 0 {
		_ = json.Unmarshal(d.InputSchema, &schema) // the gateway stores valid JSON; else null
	}
	return map[string]any{"name": d.Name, "description": d.Description, "input_schema": schema, "hash": d.Hash}
}
