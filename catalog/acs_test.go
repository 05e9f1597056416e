package catalog

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
)

// The ACS payloads give the same views as their AOS counterparts: one
// policy set for both wires (issue 10).
func TestACSViews(t *testing.T) {
	md := map[string]any{"agent_id": "agent-7", "session_id": "s-1", "turn_id": "t-2", "user_id": "u-3"}
	tests := []struct {
		name, method string
		payload      map[string]any
		answers      *warden.Tool
		tool         warden.Tool
		msg          warden.Message
		reasoning    string
	}{
		{"tool call", MethodToolCallRequest, map[string]any{
			"tool": map[string]any{"name": "Bash"}, "arguments": map[string]any{"command": map[string]any{"value": "ls -la"}, "raw": 3.0},
			"intent": map[string]any{"description": "list files"}},
			nil, warden.Tool{Name: "Bash", Args: map[string]any{"command": "ls -la", "raw": 3.0}}, warden.Message{}, "list files"},
		{"tool result names its request's args", MethodToolCallResult, map[string]any{
			"tool": map[string]any{"name": "Bash"}, "exit_status": "ok", "outputs": []any{map[string]any{"value": "x"}}},
			&warden.Tool{Name: "Bash", Args: map[string]any{"command": "ls"}}, warden.Tool{Name: "Bash", Args: map[string]any{"command": "ls"}}, warden.Message{}, ""},
		{"user message", MethodUserMessage, map[string]any{"content": []any{
			map[string]any{"type": "text", "value": "hello"}, map[string]any{"type": "image", "value": map[string]any{"url": "x"}},
			map[string]any{"type": "text", "value": "world"}}},
			nil, warden.Tool{Args: map[string]any{}}, warden.Message{Role: "user", Text: "hello\nworld"}, ""},
		{"agent response", MethodAgentResponse, map[string]any{"content": []any{map[string]any{"type": "text", "value": "done"}}, "reasoning": "because"},
			nil, warden.Tool{Args: map[string]any{}}, warden.Message{Role: "agent", Text: "done"}, "because"},
		{"wrapped MCP message", ACSMCPPrefix + "tools/call", map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "tools/call",
			"params": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Barcelona"}}},
			nil, warden.Tool{Name: "get_weather", Server: "weather", Args: map[string]any{"city": "Barcelona"}}, warden.Message{}, ""},
		{"wrapped MCP params alone", ACSMCPPrefix + "tools/call", map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Paris"}},
			nil, warden.Tool{Name: "get_weather", Server: "weather", Args: map[string]any{"city": "Paris"}}, warden.Message{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &warden.Event{Name: tt.method, Surface: warden.SurfaceACS, RequestID: "r-9", Payload: tt.payload,
				Envelope: warden.Envelope{Context: md, Server: "weather", Answers: tt.answers}}
			Views(ev)
			if !reflect.DeepEqual(ev.Tool, tt.tool) || ev.Message != tt.msg || ev.Reasoning != tt.reasoning {
				t.Errorf("tool %+v message %+v reasoning %q", ev.Tool, ev.Message, ev.Reasoning)
			}
			if ev.Agent.ID != "agent-7" || ev.SessionID != "s-1" || ev.TurnID != "t-2" || ev.User.ID != "u-3" || ev.StepID != "r-9" {
				t.Errorf("metadata views: agent %q session %q turn %q user %q step %q", ev.Agent.ID, ev.SessionID, ev.TurnID, ev.User.ID, ev.StepID)
			}
		})
	}
	// The request envelope's user: metadata.user_context.user_id (the
	// schema's place) wins over metadata.user_id.
	for _, c := range []struct {
		md   map[string]any
		want string
	}{
		{map[string]any{"user_context": map[string]any{"user_id": "u-ctx", "roles": []any{"admin"}}}, "u-ctx"},
		{map[string]any{"user_context": map[string]any{"user_id": "u-ctx"}, "user_id": "u-flat"}, "u-ctx"},
		{map[string]any{"user_id": "u-flat"}, "u-flat"},
		{map[string]any{}, ""},
	} {
		ev := &warden.Event{Name: MethodUserMessage, Surface: warden.SurfaceACS, Payload: map[string]any{},
			Envelope: warden.Envelope{Context: c.md}}
		Views(ev)
		if ev.User.ID != c.want {
			t.Errorf("metadata %v: user %q, want %q", c.md, ev.User.ID, c.want)
		}
	}
	// The same method on the AOS wire keeps the AOS shape.
	ev := &warden.Event{Name: MethodToolCallRequest, Surface: warden.SurfaceAOS, Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "x", "toolId": "Bash", "inputs": []any{map[string]any{"name": "command", "value": "ls"}}}}}
	Views(ev)
	if ev.Tool.Name != "Bash" || ev.Tool.Args["command"] != "ls" {
		t.Errorf("AOS tool call: %+v", ev.Tool)
	}
	// An ACS-only event gets its views on any surface (hook dispatch).
	ev = &warden.Event{Name: MethodUserMessage, Surface: warden.SurfaceHooks, Payload: map[string]any{"content": []any{map[string]any{"type": "text", "value": "hi"}}}}
	Views(ev)
	if ev.Message.Text != "hi" {
		t.Errorf("userMessage through dispatch: %+v", ev.Message)
	}
}
