package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

func names(es []Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Name+dirSuffix(e.Direction))
	}
	return out
}

func dirSuffix(d string) string {
	if d == "" {
		return ""
	}
	return "(" + d + ")"
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"tool.pre_call", []string{"tool.pre_call"}},
		{"tool.*", []string{"tool.pre_call", "tool.post_call", "tool.post_error"}},
		{"session.pre_*", []string{"session.pre_create", "session.pre_resume", "session.pre_stop"}},
		{"protocols/*", nil}, // counted below: AOS's four and ACS's wrapped MCP methods
		{"protocols/MCP/tools/*", []string{"protocols/MCP/tools/list", "protocols/MCP/tools/call"}},
		{"tasks/pushNotificationConfig/?et", []string{
			"tasks/pushNotificationConfig/get(outbound)", "tasks/pushNotificationConfig/get(inbound)",
			"tasks/pushNotificationConfig/set(outbound)", "tasks/pushNotificationConfig/set(inbound)"}},
		{"after_tool_call_*", []string{"after_tool_call_success", "after_tool_call_failure"}},
		{"*message*", nil}, // counted below
		{"nope", []string{}},
		{"", []string{}},
	}
	for _, tt := range tests {
		got := names(Match(tt.pattern))
		if tt.want == nil {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Match(%q) = %v, want %v", tt.pattern, got, tt.want)
		}
	}
	// The seven AOS steps (six of them ACS hooks too) and ACS's other 13.
	if n := len(Match("steps/*")); n != 7+13 {
		t.Errorf("steps/* matched %d, want 20", n)
	}
	if n := len(Match("protocols/*")); n != 4+len(ACSMCPMethods) {
		t.Errorf("protocols/* matched %d, want %d", n, 4+len(ACSMCPMethods))
	}
	if n := len(Match("*")); n != len(All()) {
		t.Errorf("* matched %d of %d", n, len(All()))
	}
	if n := len(Match("task.run.*")); n != 9 {
		t.Errorf("task.run.* matched %d, want 9", n)
	}
}

func TestLookupFindSelect(t *testing.T) {
	e, ok := Lookup("tool.pre_call")
	if !ok || e.Source != SourceAGH || e.Family != "tool" || !e.Sync || e.Payload != "ToolPreCallPayload" || e.Patch != "ToolCallPatch" {
		t.Fatalf("Lookup(tool.pre_call) = %+v, %v", e, ok)
	}
	if want := []string{"tool_name", "tool_namespace", "read_only", "tool_input", "deny", "deny_reason"}; !reflect.DeepEqual(e.PatchFields, want) {
		t.Errorf("tool.pre_call patch fields %v, want %v", e.PatchFields, want)
	}
	e.PatchFields[0] = "mutated"
	if again, _ := Lookup("tool.pre_call"); again.PatchFields[0] != "tool_name" {
		t.Error("Lookup returned the catalog's own slice")
	}
	if e, _ := Lookup("protocols/MCP"); e.Direction != warden.Outbound {
		t.Errorf("Lookup(protocols/MCP) direction %q, want the first (outbound)", e.Direction)
	}
	if e, ok := Find("message/send", warden.Inbound); !ok || e.Direction != warden.Inbound || e.Family != FamilyA2A {
		t.Errorf("Find(message/send, inbound) = %+v, %v", e, ok)
	}
	if _, ok := Lookup("ping"); ok {
		t.Error("ping is in the catalog")
	}
	if _, ok := Lookup("tool.*"); ok {
		t.Error("Lookup must not glob")
	}
	for name, want := range map[string]string{
		"message.delta": SyncAsyncOnly, "message.start": SyncYes, "event.pre_record": SyncAsyncOnly,
		"permission.resolved": SyncAsyncOnly, "coordinator.failed": SyncYes, "filter_messages": SyncYes,
	} {
		if e, _ := Lookup(name); e.SyncLabel() != want {
			t.Errorf("%s sync %q, want %q", name, e.SyncLabel(), want)
		}
	}
	perm := Select("permission", false)
	if got := names(perm); !reflect.DeepEqual(got, []string{"permission.request", "permission.resolved", "permission.denied"}) {
		t.Errorf("Select(permission) = %v", got)
	}
	if got := names(Select("permission", true)); !reflect.DeepEqual(got, []string{"permission.request"}) {
		t.Errorf("Select(permission, sync) = %v", got)
	}
	if got := Select("nope", false); got == nil || len(got) != 0 {
		t.Errorf("Select(nope) = %#v, want empty non-nil", got)
	}
	if n := len(Select("", true)); n != len(All())-9 {
		t.Errorf("sync-only: %d, want all but the 9 async-only AGH events", n)
	}
}

func TestPatchFields(t *testing.T) {
	tests := map[string][]string{
		"session.pre_create":       {"session_name", "session_type", "agent_name", "workspace_id", "workspace", "deny", "deny_reason"},
		"session.post_stop":        {"session_name", "session_type", "agent_name", "workspace_id", "workspace"},
		"automation.job.pre_fire":  {"prompt", "cancel"},
		"automation.run.failed":    nil,
		"coordinator.pre_spawn":    {"deny", "deny_reason", "agent_name", "provider", "model"},
		"task.run.pre_claim":       {"deny", "deny_reason", "required_capabilities", "priority_min"},
		"spawn.pre_create":         {"deny", "deny_reason", "agent_name", "spawn_role", "ttl_seconds", "child_permissions"},
		"agent.pre_start":          {"command", "args", "cwd", "deny", "deny_reason"},
		"turn.end":                 {"labels", "deny", "deny_reason"},
		"tool.post_error":          {"title", "tool_result", "error", "deny", "deny_reason"},
		"permission.request":       {"decision", "decision_class", "reason", "deny", "deny_reason"},
		"context.pre_compact":      {"reason", "strategy", "context_blocks", "deny", "deny_reason"},
		"filter_messages":          {"messages"},
		"before_update_message":    {"message"},
		"before_store_tool_result": {"result"},
		"after_tool_call_failure":  {"result"},
		"after_create_message":     nil,
	}
	for name, want := range tests {
		e, ok := Lookup(name)
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if len(want) == 0 {
			if !e.Observation() {
				t.Errorf("%s: patch fields %v, want observation only", name, e.PatchFields)
			}
			continue
		}
		if !reflect.DeepEqual(e.PatchFields, want) {
			t.Errorf("%s: patch fields %v, want %v", name, e.PatchFields, want)
		}
	}
	e, _ := Lookup("tool.pre_call")
	for _, f := range []string{"event", "timestamp", "session_id", "turn_id", "tool_call_id", "tool_input"} {
		if !contains(e.PayloadFields, f) {
			t.Errorf("tool.pre_call payload fields %v lack %s", e.PayloadFields, f)
		}
	}
}

func TestEventJSON(t *testing.T) {
	e, _ := Lookup("automation.run.completed")
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	want := "direction family fires name patch patch_fields payload payload_fields source sync"
	if got := strings.Join(sortStrings(keys), " "); got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if m["sync"] != "async only" || m["source"] != "agh" {
		t.Errorf("sync/source = %v/%v", m["sync"], m["source"])
	}
	if pf, ok := m["patch_fields"].([]any); !ok || len(pf) != 0 {
		t.Errorf("patch_fields = %#v, want []", m["patch_fields"])
	}
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestEveryEntryDocumented(t *testing.T) {
	for _, e := range All() {
		if e.Name == "" || e.Family == "" || e.Source == "" || e.Payload == "" || e.Patch == "" || e.Fires == "" || len(e.PayloadFields) == 0 {
			t.Errorf("incomplete entry %+v", e)
		}
		if (e.Direction != "") != (e.Family == FamilyProtocols || e.Family == FamilyA2A) {
			t.Errorf("%s: direction %q in family %s", e.Name, e.Direction, e.Family)
		}
	}
}

// TestInferDirection: a protocol message decided without a direction
// (eval, dispatch, the Go API) gets the one the AOS endpoint gives it; a
// direction the surface set is kept; a payload that is no message gets
// none.
func TestInferDirection(t *testing.T) {
	for _, c := range []struct {
		name, event, dir string
		msg              map[string]any
		want             string
	}{
		{"MCP request", "protocols/MCP", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, warden.Outbound},
		{"MCP result", "protocols/MCP", "", map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}}, warden.Inbound},
		{"MCP error", "protocols/MCP", "", map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{}}, warden.Inbound},
		{"A2A user message", "protocols/A2A", "", map[string]any{"role": "user", "parts": []any{}}, warden.Outbound},
		{"A2A agent message", "protocols/A2A", "", map[string]any{"role": "agent", "parts": []any{}}, warden.Inbound},
		{"kept", "protocols/MCP", warden.Outbound, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}}, warden.Outbound},
		{"not a message", "protocols/MCP", "", map[string]any{"foo": "bar"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := &warden.Event{Name: c.event, Direction: c.dir, Payload: c.msg}
			Views(ev)
			if ev.Direction != c.want {
				t.Errorf("direction %q, want %q", ev.Direction, c.want)
			}
		})
	}
}
