package aosclient

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

// modifyWith answers every request with a modify whose modifiedRequest is
// the request with edit applied to its params.
func modifyWith(edit func(params map[string]any)) func(req map[string]any) any {
	return func(req map[string]any) any {
		params, _ := req["params"].(map[string]any)
		edit(params)
		return respond(req, map[string]any{"decision": "modify", "message": "modified",
			"modifiedRequest": map[string]any{"jsonrpc": "2.0", "id": req["id"], "method": req["method"], "params": params}})
	}
}

// fragment answers with a Joch-style modify: modifiedRequest is frag.
func fragment(frag map[string]any) func(req map[string]any) any {
	return func(req map[string]any) any {
		return respond(req, map[string]any{"decision": "modify", "reason": "redacted", "modifiedRequest": frag})
	}
}

func aghToolEvent(name string) *warden.Event {
	return &warden.Event{
		Name: name, Surface: warden.SurfaceHooks, SessionID: "sess_9f4a", TurnID: "turn_42",
		Agent: warden.Agent{Name: "coder"},
		Tool:  warden.Tool{Name: "edit_file", ID: "toolu_123", Args: map[string]any{"path": "/src/.env", "mode": "w"}},
		Payload: map[string]any{"event": name, "session_id": "sess_9f4a", "agent_name": "coder", "turn_id": "turn_42",
			"tool_call_id": "toolu_123", "tool_name": "edit_file", "read_only": false,
			"tool_input": map[string]any{"path": "/src/.env", "mode": "w"}},
	}
}

func TestEventFamilies(t *testing.T) {
	tests := []struct {
		name  string
		ev    func(t *testing.T) *warden.Event
		reply func(req map[string]any) any
		// sent checks the request; payload checks the modified payload
		sent    func(t *testing.T, req map[string]any)
		payload func(t *testing.T, p map[string]any)
		wantErr string
	}{
		{
			name: "steps/message agent, whole modify",
			ev: func(t *testing.T) *warden.Event {
				return seedEvent(t, "seed000_07_steps_message_agent.json", warden.SurfaceAOS)
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "message", "content", 0).(map[string]any)["text"] = "[REDACTED:bank_account]"
			}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "steps/message")
				want(t, get(req, "params", "message", "role"), "agent")
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, get(p, "message", "content", 0, "text"), "[REDACTED:bank_account]")
				want(t, get(p, "citations", 0, "name"), "Bank Accounts.xlsx")
			},
		},
		{
			name: "steps/memoryStore, fragment merged into params",
			ev: func(t *testing.T) *warden.Event {
				return seedEvent(t, "seed000_06_steps_memoryStore.json", warden.SurfaceAOS)
			},
			reply: fragment(map[string]any{"memory": []any{"[redacted]"}}),
			payload: func(t *testing.T, p map[string]any) {
				want(t, jsonText(t, p["memory"]), `["[redacted]"]`)
				if p["context"] == nil {
					t.Error("context lost")
				}
			},
		},
		{
			name: "steps/toolCallRequest from the SDK: context added, then dropped again",
			ev: func(t *testing.T) *warden.Event {
				return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceSDK, SessionID: "s1", TurnID: "t1", StepID: "st1",
					Agent:   warden.Agent{ID: "a1", Name: "Agent One", Version: "2"},
					Payload: map[string]any{"toolCallRequest": map[string]any{"executionId": "e1", "toolId": "send", "inputs": []any{}}}}
			},
			reply: modifyWith(func(p map[string]any) { p["reasoning"] = "checked" }),
			sent: func(t *testing.T, req map[string]any) {
				want(t, get(req, "params", "context", "agent", "id"), "a1")
				want(t, get(req, "params", "context", "agent", "name"), "Agent One")
				want(t, get(req, "params", "context", "session", "id"), "s1")
				want(t, get(req, "params", "context", "turnId"), "t1")
				want(t, get(req, "params", "context", "stepId"), "st1")
				if ts, _ := get(req, "params", "context", "timestamp").(string); !strings.HasSuffix(ts, "Z") {
					t.Errorf("timestamp = %q", ts)
				}
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, jsonText(t, p), `{"reasoning":"checked","toolCallRequest":{"executionId":"e1","inputs":[],"toolId":"send"}}`)
			},
		},
		{
			name: "protocols/MCP wrapped as params.message, modify unwrapped",
			ev: func(t *testing.T) *warden.Event {
				ev := seedEvent(t, "seed000_08_protocols_MCP_outbound.json", warden.SurfaceMCP)
				ev.Direction, ev.SessionID = warden.Outbound, "s-mcp"
				return ev
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "message", "params", "arguments").(map[string]any)["City"] = "Paris"
			}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "protocols/MCP")
				want(t, get(req, "params", "message", "method"), "tools/call")
				want(t, get(req, "params", "message", "params", "name"), "get_appointment_slots")
				want(t, get(req, "params", "context", "session", "id"), "s-mcp")
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, p["method"], "tools/call")
				want(t, get(p, "params", "arguments", "City"), "Paris")
				want(t, get(p, "params", "arguments", "specialty"), "Family Medicine")
			},
		},
		{
			name: "protocols/MCP, modifiedRequest params as the bare message",
			ev: func(t *testing.T) *warden.Event {
				return seedEvent(t, "seed000_09_protocols_MCP_inbound.json", warden.SurfaceMCP)
			},
			reply: func(req map[string]any) any {
				msg := get(req, "params", "message").(map[string]any)
				msg["result"] = map[string]any{"content": []any{}}
				return respond(req, map[string]any{"decision": "modify", "message": "m",
					"modifiedRequest": map[string]any{"method": "protocols/MCP", "params": msg}})
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, jsonText(t, p["result"]), `{"content":[]}`)
				want(t, p["jsonrpc"], "2.0")
			},
		},
		{
			name: "protocols/MCP fragment modify is refused",
			ev: func(t *testing.T) *warden.Event {
				return seedEvent(t, "seed000_08_protocols_MCP_outbound.json", warden.SurfaceMCP)
			},
			reply:   fragment(map[string]any{"arguments": map[string]any{}}),
			wantErr: "cannot map modify of protocols/MCP back: a modifiedRequest fragment",
		},
		{
			name: "A2A hook message/stream wrapped as params.payload",
			ev: func(t *testing.T) *warden.Event {
				var req map[string]any
				readJSON(t, "seed004_00_message_stream.json", &req)
				return &warden.Event{Name: "message/stream", Surface: warden.SurfaceA2A, Direction: warden.Outbound, Payload: req}
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "payload", "params", "message", "parts", 0).(map[string]any)["text"] = "write a short paper"
			}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "message/stream")
				want(t, get(req, "params", "payload", "method"), "message/stream")
				want(t, get(req, "params", "payload", "params", "message", "messageId"), "bbb7dee1-cf5c-4683-8a6f-4114529da5eb")
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, p["method"], "message/stream")
				want(t, get(p, "params", "message", "parts", 0, "text"), "write a short paper")
				want(t, get(p, "params", "message", "parts", 1, "kind"), "file")
			},
		},
		{
			name:  "tool.pre_call → toolCallRequest, Joch fragment → tool_input",
			ev:    func(*testing.T) *warden.Event { return aghToolEvent("tool.pre_call") },
			reply: fragment(map[string]any{"inputs": []any{map[string]any{"name": "path", "value": "/src/README.md"}}}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "steps/toolCallRequest")
				want(t, jsonText(t, get(req, "params", "toolCallRequest")),
					`{"executionId":"toolu_123","inputs":[{"name":"mode","value":"w"},{"name":"path","value":"/src/.env"}],"toolId":"edit_file"}`)
				want(t, get(req, "params", "context", "session", "id"), "sess_9f4a")
				want(t, get(req, "params", "context", "turnId"), "turn_42")
				want(t, get(req, "params", "context", "agent", "name"), "coder")
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, jsonText(t, p["tool_input"]), `{"path":"/src/README.md"}`)
				want(t, p["tool_name"], "edit_file")
				want(t, p["event"], "tool.pre_call")
			},
		},
		{
			name: "tool.pre_call, whole modifiedRequest → tool_input",
			ev:   func(*testing.T) *warden.Event { return aghToolEvent("tool.pre_call") },
			reply: modifyWith(func(p map[string]any) {
				get(p, "toolCallRequest", "inputs", 1).(map[string]any)["value"] = "/tmp/.env"
			}),
			payload: func(t *testing.T, p map[string]any) {
				want(t, jsonText(t, p["tool_input"]), `{"mode":"w","path":"/tmp/.env"}`)
			},
		},
		{
			name: "tool.pre_call, changed toolId is refused",
			ev:   func(*testing.T) *warden.Event { return aghToolEvent("tool.pre_call") },
			reply: modifyWith(func(p map[string]any) {
				get(p, "toolCallRequest").(map[string]any)["toolId"] = "shell"
			}),
			wantErr: "cannot map modify of tool.pre_call back: toolCallRequest.toolId changed",
		},
		{
			name: "tool.pre_call with no Tool view reads the AGH payload",
			ev: func(*testing.T) *warden.Event {
				ev := aghToolEvent("tool.pre_call")
				ev.Tool = warden.Tool{}
				return ev
			},
			reply: answerWith(map[string]any{"decision": "deny", "reason": "secrets file"})(nil),
			sent: func(t *testing.T, req map[string]any) {
				want(t, get(req, "params", "toolCallRequest", "toolId"), "edit_file")
				want(t, get(req, "params", "toolCallRequest", "executionId"), "toolu_123")
				want(t, get(req, "params", "toolCallRequest", "inputs", 1, "value"), "/src/.env")
			},
		},
		{
			name: "tool.post_call → toolCallResult, modify → tool_result",
			ev: func(*testing.T) *warden.Event {
				ev := aghToolEvent("tool.post_call")
				ev.Payload["tool_result"] = "API_KEY=abc123"
				return ev
			},
			reply: fragment(map[string]any{"result": map[string]any{"outputs": []any{map[string]any{"kind": "text", "text": "API_KEY=[REDACTED]"}}, "isError": false}}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "steps/toolCallResult")
				want(t, jsonText(t, get(req, "params", "toolCallResult")),
					`{"executionId":"toolu_123","result":{"isError":false,"outputs":[{"kind":"text","text":"API_KEY=abc123"}]}}`)
			},
			payload: func(t *testing.T, p map[string]any) { want(t, p["tool_result"], "API_KEY=[REDACTED]") },
		},
		{
			name: "tool.post_call with a structured result",
			ev: func(*testing.T) *warden.Event {
				ev := aghToolEvent("tool.post_call")
				ev.Payload["tool_result"] = map[string]any{"rows": 3.0}
				return ev
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "toolCallResult", "result", "outputs", 0).(map[string]any)["text"] = `{"rows":0}`
			}),
			payload: func(t *testing.T, p map[string]any) { want(t, jsonText(t, p["tool_result"]), `{"rows":0}`) },
		},
		{
			name: "prompt.post_assemble → steps/message user, modify → prompt",
			ev: func(*testing.T) *warden.Event {
				return &warden.Event{Name: "prompt.post_assemble", Surface: warden.SurfaceHooks, SessionID: "sess_9f4a",
					Message: warden.Message{Role: "user", Text: "Review the current diff."},
					Payload: map[string]any{"event": "prompt.post_assemble", "prompt": "Review the current diff.", "context_blocks": []any{}}}
			},
			reply: fragment(map[string]any{"content": []any{map[string]any{"kind": "text", "text": "Review the diff."}}}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "steps/message")
				want(t, get(req, "params", "message", "role"), "user")
				want(t, get(req, "params", "message", "content", 0, "text"), "Review the current diff.")
			},
			payload: func(t *testing.T, p map[string]any) {
				want(t, p["prompt"], "Review the diff.")
				want(t, jsonText(t, p["context_blocks"]), `[]`)
			},
		},
		{
			name: "input.pre_submit → steps/message user, modify → message",
			ev: func(*testing.T) *warden.Event {
				return &warden.Event{Name: "input.pre_submit", Surface: warden.SurfaceHooks,
					Payload: map[string]any{"message": "my card is 4111 1111 1111 1111"}}
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "message", "content", 0).(map[string]any)["text"] = "my card is [REDACTED:credit_card]"
			}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, get(req, "params", "message", "content", 0, "text"), "my card is 4111 1111 1111 1111")
			},
			payload: func(t *testing.T, p map[string]any) { want(t, p["message"], "my card is [REDACTED:credit_card]") },
		},
		{
			name: "message.end → steps/message agent",
			ev: func(*testing.T) *warden.Event {
				return &warden.Event{Name: "message.end", Surface: warden.SurfaceHooks,
					Message: warden.Message{Role: "assistant", Text: "done"}, Payload: map[string]any{"text": "done"}}
			},
			reply: modifyWith(func(p map[string]any) {
				get(p, "message", "content", 0).(map[string]any)["text"] = "finished"
			}),
			sent: func(t *testing.T, req map[string]any) {
				want(t, get(req, "params", "message", "role"), "agent")
			},
			payload: func(t *testing.T, p map[string]any) { want(t, p["text"], "finished") },
		},
		{
			name:    "Standard Agents tool event: deny maps, modify cannot",
			ev:      func(*testing.T) *warden.Event { return aghToolEvent("after_tool_call_success") },
			reply:   fragment(map[string]any{"inputs": []any{}}),
			wantErr: "cannot map modify of after_tool_call_success back",
			sent: func(t *testing.T, req map[string]any) {
				want(t, req["method"], "steps/toolCallRequest")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuardian(t, tt.reply)
			ev := tt.ev(t)
			before := jsonText(t, ev.Payload)
			d, err := decide(t, g.URL, ev)
			if jsonText(t, ev.Payload) != before {
				t.Errorf("Decide changed the event's payload")
			}
			if tt.sent != nil {
				tt.sent(t, g.lastRequest())
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if tt.payload != nil {
				if d.Verdict != warden.Modify {
					t.Fatalf("verdict = %v, want modify", d.Verdict)
				}
				tt.payload(t, d.Payload)
			}
		})
	}
}

func want(t *testing.T, got, want any) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestAbstains checks that events without an AOS counterpart make no call.
func TestAbstains(t *testing.T) {
	g := newGuardian(t, func(req map[string]any) any {
		return respond(req, map[string]any{"decision": "deny", "message": "no"})
	})
	for _, ev := range []*warden.Event{
		{Name: "session.pre_create", Surface: warden.SurfaceHooks, Payload: map[string]any{}},
		{Name: "permission.request", Surface: warden.SurfaceHooks, Payload: map[string]any{"decision": "ask"}},
		{Name: "filter_messages", Surface: warden.SurfaceHooks},
		{Name: "ping", Surface: warden.SurfaceAOS},
		{Name: "context.pre_compact", Surface: warden.SurfaceHooks},
	} {
		d, err := decide(t, g.URL, ev)
		if err != nil || d.Verdict != warden.Abstain {
			t.Errorf("%s: decision %v, error %v; want abstain", ev.Name, d.Verdict, err)
		}
	}
	if n := g.calls.Load(); n != 0 {
		t.Errorf("%d calls made, want none", n)
	}
}
