package hostadapter

import (
	"strings"

	"github.com/wardenhq/warden/catalog"
)

// ClaudeCode is Claude Code's hook protocol (code.claude.com/docs/en/hooks;
// shared/acs/adapters/claude-code/mapping.md). Every answer exits 0 with
// JSON on stdout: PreToolUse answers in hookSpecificOutput
// (permissionDecision allow|deny|ask, permissionDecisionReason,
// updatedInput); UserPromptSubmit and PostToolUse block with
// {"decision":"block","reason"}; a modified tool result replaces the
// output (hookSpecificOutput.updatedMCPToolOutput for an MCP tool,
// updatedToolOutput for the others). An allow that only the default
// decision gave is no output: Claude Code's own permission flow applies.
var ClaudeCode Host = claudeCode{}

type claudeCode struct{}

func (claudeCode) Name() string { return "claude-code" }

// Map: SessionStart → steps/sessionStart, UserPromptSubmit → steps/userMessage, PreToolUse → steps/toolCallRequest,
// PostToolUse → steps/toolCallResult, Notification → steps/agentResponse
// (observed). Stop, SubagentStop and PreCompact are not forwarded (the
// mapping: no open turn known to a stateless adapter, no final chain hash,
// no entries to compact), nor SessionEnd (see sessionEndNote), nor any
// other event.
func (h claudeCode) Map(in map[string]any) (*Step, error) {
	ev, err := reqString(in, "hook_event_name")
	if err != nil {
		return nil, err
	}
	st, err := base(h.Name(), ev, in, "session_id")
	if err != nil {
		return nil, err
	}
	switch ev {
	case "SessionStart":
		src, err := optString(in, "source")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodSessionStart, map[string]any{"agent": map[string]any{"name": h.Name()}, "trigger": map[string]any{"type": src}})
	case "UserPromptSubmit":
		err = prompt(st, in, "prompt")
	case "PreToolUse":
		err = preTool(st, in)
	case "PostToolUse":
		// Real payloads carry tool_response (an object); the docs once
		// named tool_output.
		err = postTool(st, in, Gate, "success", "tool_response", "tool_output")
	case "Notification":
		msg, err := optString(in, "message")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodAgentResponse, textContent(msg))
	default:
		st.Kind = Unmapped
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Render answers per the decision table of docs/hosts.md. An allow no
// policy gave (Answer.NoOpinion) is no output at all: a PreToolUse allow
// would skip the user's permission prompt.
func (claudeCode) Render(st *Step, a Answer) Output {
	switch {
	case st.Kind != Gate, a.NoOpinion():
		return Output{}
	case st.Event == "PreToolUse":
		return Output{Stdout: encode(map[string]any{"hookSpecificOutput": claudePermission(st, a, true)})}
	case a.Decision == Allow:
		return Output{}
	case a.Decision == Modify && st.Event == "PostToolUse":
		// The output Claude sees is replaced (a secret redacted): an MCP
		// tool's with updatedMCPToolOutput, any other tool's with
		// updatedToolOutput (Claude Code 2.1.121 and later), in the
		// shape the tool's own response has.
		field := "updatedToolOutput"
		if strings.HasPrefix(st.Tool, "mcp__") {
			field = "updatedMCPToolOutput"
		}
		if out, ok := a.ResultOutput(); ok && (field == "updatedMCPToolOutput" || sameShape(out, sentOutput(st))) {
			return Output{Stdout: encode(map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "PostToolUse", field: out, "additionalContext": reasonOr(a, "tool output changed by warden"),
			}})}
		}
	}
	return Output{Stdout: encode(map[string]any{"decision": "block", "reason": blockReason(a)})}
}

// sentOutput is the tool output the step carried (its single output's
// value).
func sentOutput(st *Step) any {
	return Answer{Payload: st.Payload}.resultValue()
}

// sameShape reports whether two decoded JSON values are of one kind
// (object, array, string, ...): Claude Code keeps a built-in tool's
// original output when updatedToolOutput is not shaped as the tool's own
// response (an object for Bash), so a change of kind is blocked instead.
func sameShape(a, b any) bool {
	kind := func(v any) string {
		switch v.(type) {
		case map[string]any:
			return "object"
		case []any:
			return "array"
		case string:
			return "string"
		case bool:
			return "boolean"
		case nil:
			return "null"
		}
		return "number"
	}
	return kind(a) == kind(b)
}

// claudePermission is the hookSpecificOutput of a PreToolUse (Claude Code
// and Codex): allow, deny, ask (askable), and modify as allow with the
// whole updatedInput; a modify without usable arguments is a deny.
func claudePermission(st *Step, a Answer, askable bool) map[string]any {
	o := map[string]any{"hookEventName": st.Event}
	switch a.Decision {
	case Allow: // a policy's allow (Render answers the default's with nothing)
		o["permissionDecision"] = "allow" // the reason of an allow would only reach the user
	case Modify:
		in, ok := a.ToolInput(st)
		if !ok {
			o["permissionDecision"] = "deny"
			o["permissionDecisionReason"] = "warden asked to modify this call in a way the host cannot apply: " + reasonOr(a, "modify")
			break
		}
		o["permissionDecision"] = "allow"
		o["permissionDecisionReason"] = reasonOr(a, "modified by warden")
		o["updatedInput"] = in
	case Ask, Defer:
		if askable {
			o["permissionDecision"] = "ask"
			o["permissionDecisionReason"] = reasonOr(a, "warden asks for approval")
			break
		}
		o["permissionDecision"] = "deny"
		o["permissionDecisionReason"] = askDenied(a)
	default:
		o["permissionDecision"] = "deny"
		o["permissionDecisionReason"] = reasonOr(a, "denied by warden")
	}
	return o
}

// blockReason is the reason of a block that stands for any decision but
// allow: a deny's own, or what the host could not do.
func blockReason(a Answer) string {
	switch a.Decision {
	case Ask, Defer:
		return askDenied(a)
	case Modify:
		return "warden would modify this, which the host cannot apply here; blocked: " + reasonOr(a, "modify")
	}
	return reasonOr(a, "denied by warden")
}

// askDenied is the reason of an ask answered as a deny (the host has no
// ask here): the approval warden opened, so a person can approve it and
// the agent retry.
func askDenied(a Answer) string {
	s := "approval required: " + reasonOr(a, "warden asks for approval")
	if a.ApprovalID != "" {
		s += " (warden approval " + a.ApprovalID + "; approve it with `warden approvals approve " + a.ApprovalID + "` and retry)"
	}
	return s
}

func reasonOr(a Answer, def string) string {
	if a.Reason != "" {
		return a.Reason
	}
	return def
}
