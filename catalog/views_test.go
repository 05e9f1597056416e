package catalog

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test payload %s: %v", s, err)
	}
	return m
}

func TestViewsHookEvents(t *testing.T) {
	type views struct {
		Tool      warden.Tool
		Message   warden.Message
		Agent     warden.Agent
		User      warden.User
		SessionID string
		TurnID    string
	}
	empty := map[string]any{}
	tests := []struct {
		name, event, payload string
		want                 views
	}{
		{"agh tool.pre_call", "tool.pre_call",
			`{"session_id":"s1","turn_id":"t1","agent_name":"coder","tool_call_id":"c1","tool_name":"send_email","tool_namespace":"mail","read_only":false,"tool_input":{"to":"x@y.z"}}`,
			views{Tool: warden.Tool{Name: "send_email", ID: "c1", Server: "mail", Args: map[string]any{"to": "x@y.z"}},
				Agent: warden.Agent{Name: "coder"}, SessionID: "s1", TurnID: "t1"}},
		{"agh tool.post_error without input", "tool.post_error", `{"tool_name":"ls","error":"boom"}`,
			views{Tool: warden.Tool{Name: "ls", Args: empty}}},
		{"agh tool input as JSON text", "tool.post_call", `{"tool_name":"ls","tool_input":"{\"path\":\"/\"}"}`,
			views{Tool: warden.Tool{Name: "ls", Args: map[string]any{"path": "/"}}}},
		{"agh permission.request (seed example)", "permission.request",
			`{"session_id":"sess_9f4a","agent_name":"coder","turn_id":"turn_42","tool_input":{"path":"/x/.env"},"tool_call":{"id":"toolu_123","kind":"edit_file","title":"Edit .env"}}`,
			views{Tool: warden.Tool{Name: "edit_file", ID: "toolu_123", Args: map[string]any{"path": "/x/.env"}},
				Agent: warden.Agent{Name: "coder"}, SessionID: "sess_9f4a", TurnID: "turn_42"}},
		{"agh input.pre_submit", "input.pre_submit", `{"session_id":"s","message":"hello"}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "user", Text: "hello"}, SessionID: "s"}},
		{"agh prompt.post_assemble", "prompt.post_assemble", `{"input_class":"automation","prompt":"Review."}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "automation", Text: "Review."}}},
		{"agh prompt.post_assemble default role", "prompt.post_assemble", `{"prompt":"Review."}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "user", Text: "Review."}}},
		{"agh message.end", "message.end", `{"role":"assistant","text":"done"}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "assistant", Text: "done"}}},
		{"agh session event", "session.pre_create", `{"session_id":"s9","agent_name":"a"}`,
			views{Tool: warden.Tool{Args: empty}, Agent: warden.Agent{Name: "a"}, SessionID: "s9"}},
		{"sa after_tool_call_success", "after_tool_call_success",
			`{"thread_id":"th","agent_id":"ag","user_id":"u","step_count":2,"tool_call":{"id":"call_1","type":"function","function":{"name":"payment_process","arguments":"{\"amount\":12}"}},"result":{"status":"success","result":"ok"}}`,
			views{Tool: warden.Tool{Name: "payment_process", ID: "call_1", Args: map[string]any{"amount": 12.0}},
				Agent: warden.Agent{ID: "ag"}, User: warden.User{ID: "u"}, SessionID: "th"}},
		{"sa malformed arguments", "before_store_tool_result",
			`{"thread_id":"th","tool_call":{"id":"c","function":{"name":"x","arguments":"{not json"}},"result":{}}`,
			views{Tool: warden.Tool{Name: "x", ID: "c", Args: empty}, SessionID: "th"}},
		{"sa arguments not an object", "after_tool_call_failure",
			`{"tool_call":{"function":{"name":"x","arguments":"[1,2]"}},"error":"e"}`,
			views{Tool: warden.Tool{Name: "x", Args: empty}}},
		{"sa tool_call missing", "after_tool_call_failure", `{"tool_call":"weird"}`,
			views{Tool: warden.Tool{Args: empty}}},
		{"sa before_create_message string", "before_create_message",
			`{"thread_id":"th","user_id":null,"message":{"role":"user","content":"hi there"}}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "user", Text: "hi there"}, SessionID: "th"}},
		{"sa message content parts", "after_update_message",
			`{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "assistant", Text: "a\nb"}}},
		{"sa filter_messages last message", "prefilter_llm_history",
			`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"last"}]}`,
			views{Tool: warden.Tool{Args: empty}, Message: warden.Message{Role: "user", Text: "last"}}},
		{"sa empty payload", "filter_messages", `{}`, views{Tool: warden.Tool{Args: empty}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &warden.Event{Name: tt.event, Payload: decode(t, tt.payload),
				Tool: warden.Tool{Name: "stale"}, Message: warden.Message{Text: "stale"}}
			Views(ev)
			got := views{ev.Tool, ev.Message, ev.Agent, ev.User, ev.SessionID, ev.TurnID}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("views\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Views replaces whatever a surface put in the views: an AOS payload in a
// hook event's shape gives no tool, an unknown event gives only the
// envelope's session.
func TestViewsReplaceStaleViews(t *testing.T) {
	aosEv := &warden.Event{Name: "steps/toolCallRequest", Payload: map[string]any{"tool_name": "x"},
		Tool: warden.Tool{Name: "from-surface"}}
	Views(aosEv)
	if aosEv.Tool.Name != "" || aosEv.Tool.Args == nil {
		t.Errorf("AOS event kept a surface's view: %+v", aosEv.Tool)
	}
	un := &warden.Event{Name: "custom.event", Payload: nil, Agent: warden.Agent{ID: "stale"},
		Envelope: warden.Envelope{SessionID: "s"}}
	Views(un)
	if un.Tool.Args == nil || un.Agent.ID != "" || un.SessionID != "s" {
		t.Errorf("unknown event: %+v", un)
	}
	// A nil payload on a known event must not panic either.
	ev := &warden.Event{Name: "tool.pre_call"}
	Views(ev)
	if ev.Tool.Args == nil {
		t.Error("nil Args")
	}
}

// WithPayload re-runs the builder, so a patch that renames the tool is seen
// by the next guardian.
func TestViewsAfterPatch(t *testing.T) {
	ev := &warden.Event{Name: "tool.pre_call", Payload: map[string]any{"tool_name": "a"}}
	ev.BuildViews(Views)
	next := ev.WithPayload(map[string]any{"tool_name": "b", "tool_input": map[string]any{"k": "v"}})
	if next.Tool.Name != "b" || next.Tool.Args["k"] != "v" {
		t.Errorf("after patch: %+v", next.Tool)
	}
}

func FuzzViews(f *testing.F) {
	f.Add("after_tool_call_success", `{"tool_call":{"function":{"name":"x","arguments":"{"}}}`)
	f.Add("message.start", `{"role":1,"text":[{"text":"a"}]}`)
	f.Fuzz(func(t *testing.T, name, payload string) {
		var m map[string]any
		_ = json.Unmarshal([]byte(payload), &m)
		ev := &warden.Event{Name: name, Payload: m}
		Views(ev)
		if ev.Tool.Args == nil {
			t.Fatal("nil Args")
		}
	})
}
