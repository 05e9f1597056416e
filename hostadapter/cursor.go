package hostadapter

import (
	"errors"
	"fmt"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonstrict"
)

// Cursor is Cursor's hook protocol (cursor.com/docs/agent/hooks;
// shared/acs/adapters/cursor/mapping.md). The permission events answer
// {"permission": allow|deny|ask, "user_message", "agent_message"}
// (preToolUse also "updated_input"); beforeSubmitPrompt answers
// {"continue": bool, "user_message"} and exits 2 to block; postToolUse
// can only add context. Every answer is JSON ({} when there is nothing to
// say, as for an allow only the default decision gave), so a hook with
// failClosed: true never trips on empty output.
var Cursor Host = cursor{}

type cursor struct{}

func (cursor) Name() string { return "cursor" }

// cursorPermission are the events answered with a permission.
var cursorPermission = map[string]bool{
	"preToolUse": true, "beforeShellExecution": true, "beforeMCPExecution": true, "subagentStart": true,
}

// Map per the mapping's event table. stop → steps/turnEnd with the
// generation_id as its turn (skipped without one); sessionEnd (see
// sessionEndNote), preCompact,
// subagentStop, beforeReadFile, beforeTabFileRead, workspaceOpen and
// unknown events are not forwarded (the mapping's reasons).
func (h cursor) Map(in map[string]any) (*Step, error) {
	ev, err := reqString(in, "hook_event_name")
	if err != nil {
		return nil, err
	}
	st, err := base(h.Name(), ev, in, "session_id", "conversation_id")
	if err != nil {
		return nil, err
	}
	if st.TurnID, err = optString(in, "generation_id"); err != nil {
		return nil, err
	}
	switch ev {
	case "sessionStart":
		observe(st, catalog.MethodSessionStart, map[string]any{"agent": map[string]any{"name": h.Name()}, "trigger": map[string]any{"type": "startup"}})
		st.TurnID = "" // session-level
	case "stop":
		if st.TurnID == "" {
			st.Kind = Unmapped
			break
		}
		s, _ := in["status"].(string)
		outcome := map[string]string{"aborted": "interrupted", "error": "error"}[s]
		if outcome == "" {
			outcome = "completed"
		}
		observe(st, catalog.MethodTurnEnd, map[string]any{"turn_id": st.TurnID, "outcome": outcome})
	case "beforeSubmitPrompt":
		err = prompt(st, in, "prompt")
	case "preToolUse":
		err = preTool(st, in)
	case "beforeShellExecution":
		var cmd string
		if cmd, err = reqString(in, "command"); err == nil {
			input := map[string]any{"command": cmd}
			if cwd, _ := in["cwd"].(string); cwd != "" {
				input["cwd"] = cwd
			}
			st.Kind, st.Method, st.Tool, st.Input = Gate, catalog.MethodToolCallRequest, "Shell", input
			st.Payload = toolRequest("Shell", input)
		}
	case "beforeMCPExecution":
		err = cursorMCP(st, in)
	case "subagentStart":
		id, _ := in["subagent_id"].(string)
		if id == "" {
			id, _ = in["tool_call_id"].(string)
		}
		if id == "" {
			id = st.SessionID
		}
		p := map[string]any{"subagent_session_id": id}
		if t, _ := in["task"].(string); t != "" {
			p["task"] = map[string]any{"value": t}
		}
		st.Kind, st.Method, st.Payload = Gate, catalog.MethodSubagentStart, p
	case "postToolUse":
		err = postTool(st, in, Gate, "success", "tool_output")
		if s, ok := in["tool_output"].(string); ok && err == nil {
			st.Payload = toolResult(st.Tool, jsonOrString(s), "success")
		}
	case "postToolUseFailure":
		err = postTool(st, in, Observe, "failure", "error_message")
	case "afterShellExecution":
		out, _ := in["output"].(string)
		observe(st, catalog.MethodToolCallResult, toolResult("Shell", out, "success"))
		st.Tool = "Shell"
	case "afterMCPExecution":
		if err = postTool(st, in, Observe, "success", "result_json"); err == nil {
			if s, ok := in["result_json"].(string); ok {
				st.Payload = toolResult(st.Tool, jsonOrString(s), "success")
			}
		}
	case "afterFileEdit", "afterTabFileEdit":
		fp, _ := in["file_path"].(string)
		observe(st, catalog.MethodToolCallResult, toolResult("Edit", map[string]any{"file_path": fp, "edits": in["edits"]}, "success"))
		st.Tool = "Edit"
	case "afterAgentResponse", "afterAgentThought":
		t, err := optString(in, "text")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodAgentResponse, textContent(t))
	default:
		st.Kind = Unmapped
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// cursorMCP maps beforeMCPExecution: tool_input is JSON-stringified.
func cursorMCP(st *Step, in map[string]any) error {
	name, err := reqString(in, "tool_name")
	if err != nil {
		return err
	}
	input := map[string]any{}
	switch v := in["tool_input"].(type) {
	case map[string]any:
		input = v
	case string:
		// Text that readers would read differently (a duplicate key: the
		// policies would see one value, the MCP server maybe the other)
		// is refused, as a duplicate key in the hook's own JSON is.
		var amb *jsonstrict.Error
		if err := jsonstrict.Check([]byte(v)); errors.As(err, &amb) {
			return fmt.Errorf("tool_input: JSON text with %v", amb)
		}
		if m, ok := jsonOrString(v).(map[string]any); ok {
			input = m
		}
	}
	st.Kind, st.Method, st.Tool, st.Input = Gate, catalog.MethodToolCallRequest, name, input
	st.Payload = toolRequest(name, input)
	if u, _ := in["url"].(string); u != "" {
		st.Payload["tool"].(map[string]any)["provider"] = u
	}
	return nil
}

// Render answers per the decision table of docs/hosts.md.
func (cursor) Render(st *Step, a Answer) Output {
	empty := Output{Stdout: []byte("{}\n")}
	switch {
	case st.Kind != Gate, a.NoOpinion():
		return empty
	case cursorPermission[st.Event]:
		return Output{Stdout: encode(cursorPermissionAnswer(st, a))}
	case st.Event == "beforeSubmitPrompt":
		if a.Decision == Allow {
			return Output{Stdout: encode(map[string]any{"continue": true})}
		}
		r := blockReason(a)
		return Output{Stdout: encode(map[string]any{"continue": false, "user_message": r}), Stderr: r, Exit: 2}
	case st.Event == "postToolUse":
		switch a.Decision {
		case Allow:
			return empty
		case Deny:
			return Output{Stdout: encode(map[string]any{"additional_context": "warden denied this result: " + reasonOr(a, "denied")})}
		}
		return Output{Stdout: encode(map[string]any{"additional_context": blockReason(a)})}
	}
	return empty
}

func cursorPermissionAnswer(st *Step, a Answer) map[string]any {
	msg := func(perm, r string) map[string]any {
		return map[string]any{"permission": perm, "user_message": r, "agent_message": r}
	}
	switch a.Decision {
	case Allow:
		return map[string]any{"permission": "allow"}
	case Ask, Defer:
		if st.Event == "subagentStart" { // Cursor reads ask as deny there
			return msg("deny", askDenied(a))
		}
		return msg("ask", reasonOr(a, "warden asks for approval"))
	case Modify:
		if in, ok := a.ToolInput(st); ok && st.Event == "preToolUse" {
			return map[string]any{"permission": "allow", "updated_input": in, "user_message": reasonOr(a, "modified by warden")}
		}
		return msg("deny", blockReason(a))
	}
	return msg("deny", reasonOr(a, "denied by warden"))
}
