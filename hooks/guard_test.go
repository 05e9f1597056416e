package hooks

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

func TestGuard(t *testing.T) {
	tests := []struct {
		name, event string
		before      map[string]any
		patch       map[string]any
		want        string // "" = allowed
	}{
		{"permission: ask may become deny", "permission.request",
			map[string]any{"decision": "ask"}, map[string]any{"decision": "deny", "reason": "no"}, ""},
		{"permission: denied may not become allow", "permission.request",
			map[string]any{"decision": "denied"}, map[string]any{"decision": "allow"}, RefusedEscalation},
		{"permission: blocked may not become ask", "permission.request",
			map[string]any{"decision": "blocked"}, map[string]any{"decision": "ask"}, RefusedEscalation},
		{"permission: unknown field", "permission.request",
			map[string]any{"decision": "ask", "resource": "/a"}, map[string]any{"resource": "/b"}, RefusedField},
		{"spawn: ttl may shrink", "spawn.pre_create",
			map[string]any{"ttl_seconds": 600.0}, map[string]any{"ttl_seconds": 60.0}, ""},
		{"spawn: ttl may not grow", "spawn.pre_create",
			map[string]any{"ttl_seconds": 600.0}, map[string]any{"ttl_seconds": 6000.0}, RefusedEscalation},
		{"spawn: permissions may narrow", "spawn.pre_create",
			map[string]any{"child_permissions": []any{"read", "write"}}, map[string]any{"child_permissions": []any{"read"}}, ""},
		{"spawn: permissions may not widen", "spawn.pre_create",
			map[string]any{"child_permissions": []any{"read"}}, map[string]any{"child_permissions": []any{"read", "exec"}}, RefusedEscalation},
		{"claim: capabilities may be added", "task.run.pre_claim",
			map[string]any{"required_capabilities": []any{"gpu"}}, map[string]any{"required_capabilities": []any{"gpu", "net"}}, ""},
		{"claim: capabilities may not be removed", "task.run.pre_claim",
			map[string]any{"required_capabilities": []any{"gpu", "net"}}, map[string]any{"required_capabilities": []any{"gpu"}}, RefusedEscalation},
		{"tool: input may change", "tool.pre_call",
			map[string]any{"tool_input": map[string]any{"path": "/a"}}, map[string]any{"tool_input": map[string]any{"path": "/b"}}, ""},
		{"observation event takes no patch", "tool.post_error",
			map[string]any{"session_id": "s"}, map[string]any{"session_id": "t"}, RefusedField},
		{"aos events are not restricted here", "steps/toolCallRequest",
			map[string]any{"x": 1.0}, map[string]any{"y": 2.0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := map[string]any{}
			for k, v := range tt.before {
				next[k] = v
			}
			for k, v := range tt.patch {
				next[k] = v
			}
			err := guard(&warden.Event{Name: tt.event, Payload: tt.before}, next)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestApplyPatch(t *testing.T) {
	tool := map[string]any{"tool_name": "edit_file", "tool_input": map[string]any{"path": "/a"}}
	tests := []struct {
		name, event, patch string
		want               warden.Verdict
		check              func(t *testing.T, d warden.Decision)
	}{
		{"empty stdout", "tool.pre_call", "", warden.Allow, nil},
		{"empty object", "tool.pre_call", "{}", warden.Allow, nil},
		{"null is unchanged", "after_tool_call_success", "null", warden.Allow, nil},
		{"deny", "tool.pre_call", `{"deny": true, "deny_reason": "no edits"}`, warden.Deny, func(t *testing.T, d warden.Decision) {
			if d.Reason != "no edits" {
				t.Errorf("reason %q", d.Reason)
			}
		}},
		{"agh fields merge", "tool.pre_call", `{"tool_input": {"path": "/b"}}`, warden.Modify, func(t *testing.T, d warden.Decision) {
			if d.Payload["tool_input"].(map[string]any)["path"] != "/b" || d.Payload["tool_name"] != "edit_file" {
				t.Errorf("payload %v", d.Payload)
			}
		}},
		{"standard agents list return", "filter_messages", `[{"role":"user","content":"hi"}]`, warden.Modify, func(t *testing.T, d warden.Decision) {
			if l, ok := d.Payload["messages"].([]any); !ok || len(l) != 1 {
				t.Errorf("payload %v", d.Payload)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := applyPatch(&warden.Event{Name: tt.event, Payload: tool}, []byte(tt.patch))
			if err != nil || d.Verdict != tt.want {
				t.Fatalf("got %v, %v; want %v", d.Verdict, err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
	for _, bad := range []string{"not json", `"a string"`, `[1]`} {
		if _, err := applyPatch(&warden.Event{Name: "tool.pre_call", Payload: tool}, []byte(bad)); err == nil {
			t.Errorf("patch %s accepted for tool.pre_call", bad)
		}
	}
}
