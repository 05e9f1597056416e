package hostadapter

import (
	"github.com/wardenhq/warden/catalog"
)

// Gemini is Gemini CLI's hook protocol (geminicli.com/docs/hooks/reference):
// stdin carries session_id, transcript_path, cwd, hook_event_name and
// timestamp plus the event's fields; stdout is one JSON object whose
// common fields are decision ("allow" or "deny"), reason, continue,
// stopReason and systemMessage; BeforeTool may rewrite the call with
// hookSpecificOutput.tool_input. Exit 0 always (exit 2 is the fallback
// block, used by Fail). An allow only the default decision gave is {}
// (no decision). Gemini CLI documents no ask: an ask is a deny naming the
// approval.
var Gemini Host = gemini{}

type gemini struct{}

func (gemini) Name() string { return "gemini" }

// Map: BeforeTool → steps/toolCallRequest, AfterTool → steps/toolCallResult,
// BeforeAgent → steps/userMessage (gates the turn), AfterAgent →
// steps/agentResponse (observed: a deny there would make Gemini retry the
// turn), SessionStart (observed). BeforeModel, AfterModel,
// BeforeToolSelection, PreCompress, Notification and SessionEnd (see
// sessionEndNote) are not forwarded.
func (h gemini) Map(in map[string]any) (*Step, error) {
	ev, err := reqString(in, "hook_event_name")
	if err != nil {
		return nil, err
	}
	st, err := base(h.Name(), ev, in, "session_id")
	if err != nil {
		return nil, err
	}
	switch ev {
	case "BeforeTool":
		err = preTool(st, in)
		if mc, ok := in["mcp_context"].(map[string]any); ok && err == nil {
			if s, _ := mc["server_name"].(string); s != "" {
				st.Payload["tool"].(map[string]any)["provider"] = s
			}
		}
	case "AfterTool":
		err = postTool(st, in, Gate, "success", "tool_response")
	case "BeforeAgent":
		err = prompt(st, in, "prompt")
	case "AfterAgent":
		r, err := optString(in, "prompt_response")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodAgentResponse, textContent(r))
	case "SessionStart":
		src, err := optString(in, "source")
		if err != nil {
			return nil, err
		}
		observe(st, catalog.MethodSessionStart, map[string]any{"agent": map[string]any{"name": h.Name()}, "trigger": map[string]any{"type": src}})
	default:
		st.Kind = Unmapped
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Render answers per the decision table of docs/hosts.md.
func (gemini) Render(st *Step, a Answer) Output {
	switch {
	case st.Kind != Gate, a.NoOpinion():
		return Output{Stdout: []byte("{}\n")}
	case a.Decision == Allow:
		return Output{Stdout: encode(map[string]any{"decision": "allow"})}
	case a.Decision == Modify && st.Event == "BeforeTool":
		if in, ok := a.ToolInput(st); ok {
			return Output{Stdout: encode(map[string]any{
				"decision": "allow", "reason": reasonOr(a, "modified by warden"),
				"hookSpecificOutput": map[string]any{"hookEventName": "BeforeTool", "tool_input": in},
			})}
		}
	}
	return Output{Stdout: encode(map[string]any{"decision": "deny", "reason": blockReason(a)})}
}
