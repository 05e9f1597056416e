package catalog

import (
	"errors"
	"testing"
)

// CheckPayload holds every way in (hook dispatch, eval, the Go API) to the
// payload shapes the AOS endpoint holds its params to.
func TestCheckPayload(t *testing.T) {
	ctx := map[string]any{"session": map[string]any{"id": "s1"}}
	for _, tt := range []struct {
		name    string
		event   string
		payload map[string]any
		want    string // the error; "" for none
	}{
		{"a step", MethodToolCallRequest, map[string]any{"context": ctx, "toolCallRequest": map[string]any{
			"executionId": "e", "toolId": "t", "inputs": []any{map[string]any{"name": "to"}}}}, ""},
		{"a step without its context", MethodMessage, map[string]any{},
			"invalid payload: params: missing context"},
		{"a field of the wrong type", MethodMessage, map[string]any{"context": ctx, "message": map[string]any{"role": "user", "content": "hi"}},
			"invalid payload: params.message.content: expected an array, got a string"},
		{"an MCP message", MethodMCP, map[string]any{"jsonrpc": "2.0", "method": "tools/call", "params": map[string]any{"name": "x"}}, ""},
		{"not an MCP message", MethodMCP, map[string]any{"message": map[string]any{}},
			"invalid payload: payload: expected an MCP JSON-RPC message (jsonrpc, method, result or error)"},
		{"an A2A hook method's message", A2ASend, map[string]any{"jsonrpc": "2.0", "method": A2ASend,
			"params": map[string]any{"message": map[string]any{"role": 7.0}}},
			"invalid payload: payload.params.message.role: expected a string, got a number"},
		{"a hook event's arguments as JSON text", "tool.pre_call", map[string]any{"tool_input": `{"to":1,"to":2}`},
			`invalid payload: payload.tool_input: JSON text with duplicate key "to"`},
		{"a hook event", "tool.pre_call", map[string]any{"tool_input": map[string]any{"to": 1}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPayload(tt.event, tt.payload)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckPayload: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("CheckPayload: %v, want %s", err, tt.want)
			}
		})
	}
	var se *ShapeError
	if err := CheckPayload(MethodMessage, map[string]any{}); !errors.As(err, &se) || se.Field != "params" || se.Reason != "missing context" {
		t.Fatalf("ShapeError %+v from %v", se, err)
	}
}
