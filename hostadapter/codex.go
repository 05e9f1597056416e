package hostadapter

import (
	"encoding/json"

	"github.com/wardenhq/warden/catalog"
)

// Codex is OpenAI Codex's hook protocol (developers.openai.com/codex/hooks;
// shared/acs/adapters/codex/mapping.md). It follows Claude Code's shapes,
// with two documented differences: PreToolUse has no usable
// permissionDecision "ask" (Codex reports a hook error and runs the call),
// so an ask is a deny naming the approval; and for Bash and apply_patch a
// modify may only rewrite the command string.
var Codex Host = codex{}

type codex struct{}

func (codex) Name() string { return "codex" }

// Map: PreToolUse → steps/toolCallRequest (the mapping's first slice), and,
// as for Claude Code, UserPromptSubmit → steps/userMessage, PostToolUse →
// steps/toolCallResult, SessionStart → steps/sessionStart (observed), Stop →
// steps/turnEnd (observed; Codex sends its turn_id). Other events are not
// forwarded.
func (h codex) Map(in map[string]any) (*Step, error) {
	ev, err := reqString(in, "hook_event_name")
	if err != nil {
		return nil, err
	}
	st, err := base(h.Name(), ev, in, "session_id")
	if err != nil {
		return nil, err
	}
	if st.TurnID, err = optString(in, "turn_id"); err != nil {
		return nil, err
	}
	for _, k := range []string{"model", "permission_mode"} {
		if s, _ := in[k].(string); s != "" {
			st.Metadata[k] = s
		}
	}
	switch ev {
	case "PreToolUse":
		err = preTool(st, in)
	case "PostToolUse":
		err = postTool(st, in, Gate, "success", "tool_response", "tool_output")
	case "UserPromptSubmit":
		err = prompt(st, in, "prompt")
	case "SessionStart":
		src, err := optString(in, "source")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodSessionStart, map[string]any{"agent": map[string]any{"name": h.Name()}, "trigger": map[string]any{"type": src}})
	case "Stop":
		if st.TurnID == "" {
			st.Kind = Unmapped // no turn to end: skipped, as the mapping does
			break
		}
		observe(st, catalog.MethodTurnEnd, map[string]any{"turn_id": st.TurnID, "outcome": "completed"})
	default:
		st.Kind = Unmapped
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Render answers per the decision table of docs/hosts.md. An allow is
// always no output: Codex rejects permissionDecision "allow" without
// updatedInput as an unsupported output (a failed hook), and its own
// permission flow is what an allow leaves in charge anyway.
func (codex) Render(st *Step, a Answer) Output {
	switch {
	case st.Kind != Gate, a.Decision == Allow:
		return Output{}
	case st.Event == "PreToolUse":
		if a.Decision == Modify && !codexModifiable(st, a) {
			a = Answer{Decision: Deny, Reason: "warden would modify more than the command of " + st.Tool + ", which Codex cannot apply: " + reasonOr(a, "modify")}
		}
		return Output{Stdout: encode(map[string]any{"hookSpecificOutput": claudePermission(st, a, false)})}
	}
	return Output{Stdout: encode(map[string]any{"decision": "block", "reason": blockReason(a)})}
}

// codexModifiable: for Bash and apply_patch only the command may change,
// and it must stay a string (the mapping); other tools take the merged
// input.
func codexModifiable(st *Step, a Answer) bool {
	if st.Tool != "Bash" && st.Tool != "apply_patch" {
		return true
	}
	in, ok := a.ToolInput(st)
	if !ok {
		return false
	}
	if _, ok := in["command"].(string); !ok {
		return false
	}
	for k, v := range in {
		if k != "command" && !sameJSON(v, st.Input[k]) {
			return false
		}
	}
	return len(in) == len(st.Input) || len(in) == len(st.Input)+1 && st.Input["command"] == nil
}

// sameJSON compares two decoded JSON values by their encoding.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
