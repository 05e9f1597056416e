package catalog

// Standard Agents families (seed 002's sections).
const (
	FamilyMessageFiltering = "message-filtering" // filter_messages, prefilter_llm_history
	FamilyMessageLifecycle = "message-lifecycle" // before/after create/update message
	FamilyToolExecution    = "tool-execution"    // before_store_tool_result, after_tool_call_*
)

// StandardAgentsStateFields are the fields every Standard Agents dispatch
// payload carries, taken from the hook's ThreadState argument.
//
// A Standard Agents hook is a function (state, ...args); warden dispatches it
// with one JSON object, the ThreadState flattened to snake case plus the
// hook's other arguments by name:
//
//	{
//	  "thread_id":  "t_1",     // state.threadId
//	  "agent_id":   "a_1",     // state.agentId
//	  "user_id":    "u_1",     // state.userId (null when none)
//	  "step_count": 3,         // state.execution.stepCount
//	  // then, by hook:
//	  "messages":   [...],     // filter_messages (HookMessage[]), prefilter_llm_history (LLMMessage[])
//	  "message":    {...},     // before/after_create_message, after_update_message;
//	                           // before_update_message: the updates, with "message_id"
//	  "tool_call":  {...},     // before_store_tool_result, after_tool_call_*: HookToolCall
//	  "result":     {...},     //   and the HookToolResult ({status, result?, error?, stack?})
//	  "error":      "..."      // after_tool_call_failure: the tool's error (result.error)
//	}
//
// The hook's answer is the seed's return value: the message list for the
// filtering hooks, the message (or update) object for before_*_message, the
// tool result for before_store_tool_result, a replacement result or null
// ("unchanged") for after_tool_call_*, and nothing for after_*_message.
var StandardAgentsStateFields = []string{"thread_id", "agent_id", "user_id", "step_count"}

// saRow is one Standard Agents hook: seed 002's table row plus its signature.
type saRow struct {
	name, family, trigger, purpose, payload, patch string
	own, patchFields                               []string
}

// saRows is seed 002's "1.1 Available Hooks" table, in order.
var saRows = []saRow{
	{"filter_messages", FamilyMessageFiltering, "Before LLM context assembly", "Filter/transform message history",
		"messages: HookMessage[]", "HookMessage[] (the list to use)",
		[]string{"messages"}, []string{"messages"}},
	{"prefilter_llm_history", FamilyMessageFiltering, "After context assembly", "Final adjustments before LLM request",
		"messages: LLMMessage[]", "LLMMessage[] (the list to send)",
		[]string{"messages"}, []string{"messages"}},
	{"before_create_message", FamilyMessageLifecycle, "Before message insert", "Transform message before storage",
		"message: Record<string, unknown>", "message object (inserted)",
		[]string{"message"}, []string{"message"}},
	{"after_create_message", FamilyMessageLifecycle, "After message insert", "Side effects after storage",
		"message: Record<string, unknown>", "void (observation)",
		[]string{"message"}, nil},
	{"before_update_message", FamilyMessageLifecycle, "Before message update", "Transform update data",
		"message_id, message: updates", "updates object (applied)",
		[]string{"message_id", "message"}, []string{"message"}},
	{"after_update_message", FamilyMessageLifecycle, "After message update", "Side effects after update",
		"message: HookMessage", "void (observation)",
		[]string{"message"}, nil},
	{"before_store_tool_result", FamilyToolExecution, "Before tool result storage", "Transform tool results",
		"tool_call: HookToolCall, result: HookToolResult", "tool result object (stored)",
		[]string{"tool_call", "result"}, []string{"result"}},
	{"after_tool_call_success", FamilyToolExecution, "After successful tool call", "Post-process success results",
		"tool_call: HookToolCall, result: HookToolResult", "HookToolResult | null (null: unchanged)",
		[]string{"tool_call", "result"}, []string{"result"}},
	{"after_tool_call_failure", FamilyToolExecution, "After failed tool call", "Handle/recover from errors",
		"tool_call, result: HookToolResult, error", "HookToolResult | null (null: unchanged)",
		[]string{"tool_call", "result", "error"}, []string{"result"}},
}

// standardAgentsEvents returns the nine Standard Agents hooks. They are all
// awaited by the runtime (their signatures return a Promise), so all are
// sync-eligible.
func standardAgentsEvents() []Event {
	out := make([]Event, 0, len(saRows))
	for _, r := range saRows {
		out = append(out, Event{
			Name: r.name, Family: r.family, Source: SourceStandardAgents, Sync: true,
			Payload: r.payload, Patch: r.patch,
			PayloadFields: cat(StandardAgentsStateFields, r.own), PatchFields: cat(r.patchFields),
			Fires: r.trigger + ": " + r.purpose + ".",
		})
	}
	return out
}
