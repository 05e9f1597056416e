package catalog

import (
	"strings"

	"github.com/wardenhq/warden"
)

// SourceACS is the OWASP Agent Control Standard v0.1.0: its
// native steps/* hooks, the wrapped MCP methods and the AgBOM methods.
const SourceACS Source = "acs"

// ACS families.
const (
	FamilyAgBOM      = "agbom"       // the ACS-Inspect methods
	FamilyWrappedMCP = "wrapped-mcp" // protocols/MCP/<method>: an MCP message wrapped in ACS
)

// The ACS native hooks (ACS specification §6, hooks.md), in the spec's
// order. Six share their method with an AOS step (agentTrigger,
// knowledgeRetrieval, memoryContextRetrieval, memoryStore, toolCallRequest,
// toolCallResult): one policy covers both wires, the views being read by
// the surface's shape.
const (
	MethodSessionStart  = "steps/sessionStart"
	MethodTurnStart     = "steps/turnStart"
	MethodUserMessage   = "steps/userMessage"
	MethodAgentResponse = "steps/agentResponse"
	MethodPreCompact    = "steps/preCompact"
	MethodPostCompact   = "steps/postCompact"
	MethodSubagentStart = "steps/subagentStart"
	MethodSubagentStop  = "steps/subagentStop"
	MethodSkillRegister = "steps/skillRegister"
	MethodSkillLoad     = "steps/skillLoad"
	MethodSkillUnload   = "steps/skillUnload"
	MethodTurnEnd       = "steps/turnEnd"
	MethodSessionEnd    = "steps/sessionEnd"
	MethodAgBOMSnapshot = "agbom/snapshot"
	MethodAgBOMChanged  = "agbom/changed"
	// ACSMCPPrefix prefixes a wrapped MCP method: protocols/MCP/tools/call.
	ACSMCPPrefix = "protocols/MCP/"
)

// ACSHooks lists the 19 ACS native hooks, in the spec's order.
var ACSHooks = []string{
	MethodSessionStart, MethodAgentTrigger, MethodTurnStart, MethodUserMessage, MethodAgentResponse,
	MethodKnowledgeRetrieval, MethodMemoryContextRetrieval, MethodMemoryStore,
	MethodToolCallRequest, MethodToolCallResult, MethodPreCompact, MethodPostCompact,
	MethodSubagentStart, MethodSubagentStop, MethodSkillRegister, MethodSkillLoad, MethodSkillUnload,
	MethodTurnEnd, MethodSessionEnd,
}

// ACSMCPMethods are the MCP methods a wrapped MCP message names (after
// protocols/MCP/): each is a catalog event, so a policy names the one it
// governs (protocols/MCP/tools/call) or all of them (protocols/MCP/*).
var ACSMCPMethods = []string{
	"initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get",
	"resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
	"resources/unsubscribe", "completion/complete", "logging/setLevel",
	"sampling/createMessage", "elicitation/create", "roots/list",
	"notifications/initialized", "notifications/cancelled", "notifications/progress",
	"notifications/message", "notifications/resources/updated", "notifications/resources/list_changed",
	"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/roots/list_changed",
}

// acsPatch is what a Guardian answers to an ACS hook: a DecisionResponse.
const acsPatch = "DecisionResponse (allow, deny, modify, ask, defer)"

var acsPatchFields = []string{"decision", "reasoning", "reason_codes", "modifications", "ask_details", "defer_details"}

// acsInfo says what each ACS-only hook carries and when it fires; the
// hooks shared with AOS keep their AOS entry.
var acsInfo = map[string]struct {
	fields []string
	fires  string
}{
	MethodSessionStart:  {[]string{"agent", "trigger", "configuration"}, "When an agent session begins, before its first turn: the root of the session's audit chain."},
	MethodTurnStart:     {[]string{"turn_id", "trigger"}, "When a turn begins."},
	MethodUserMessage:   {[]string{"content"}, "When a user message reaches the agent, before the LLM sees it."},
	MethodAgentResponse: {[]string{"content", "reasoning"}, "Before the agent's answer is returned to the user."},
	MethodPreCompact:    {[]string{"entries_to_compact", "strategy"}, "Before the context window is compacted."},
	MethodPostCompact:   {[]string{"summary", "compacted_entries"}, "After compaction, before the summary replaces the entries (deny is not allowed)."},
	MethodSubagentStart: {[]string{"subagent", "task"}, "Before a subagent is spawned."},
	MethodSubagentStop:  {[]string{"subagent", "result", "final_chain_hash"}, "When a subagent ends (audit only: the client does not act on a deny)."},
	MethodSkillRegister: {[]string{"skill", "definition"}, "When a skill is registered."},
	MethodSkillLoad:     {[]string{"skill"}, "Before a skill is loaded into the context."},
	MethodSkillUnload:   {[]string{"skill"}, "When a skill is unloaded."},
	MethodTurnEnd:       {[]string{"turn_id", "outcome"}, "When a turn ends."},
	MethodSessionEnd:    {[]string{"reason"}, "When the session ends."},
}

// acsEvents returns the ACS-only events: the native hooks AOS does not
// have, the wrapped MCP methods and the AgBOM methods.
func acsEvents() []Event {
	var out []Event
	for _, m := range ACSHooks {
		info, ok := acsInfo[m]
		if !ok {
			continue // shared with AOS: the AOS entry stands for both
		}
		out = append(out, Event{
			Name: m, Family: FamilySteps, Source: SourceACS, Sync: true,
			Payload: "ACS " + m + " payload", Patch: acsPatch,
			PayloadFields: info.fields, PatchFields: acsPatchFields, Fires: info.fires,
		})
	}
	for _, m := range ACSMCPMethods {
		out = append(out, Event{
			Name: ACSMCPPrefix + m, Family: FamilyWrappedMCP, Source: SourceACS, Sync: true,
			Payload: "the wrapped MCP " + m + " message", Patch: acsPatch,
			PayloadFields: rpcRequestFields, PatchFields: acsPatchFields,
			Fires: "Before the agent sends (or after it receives) the MCP " + m + " message, wrapped in ACS.",
		})
	}
	for _, m := range []string{MethodAgBOMSnapshot, MethodAgBOMChanged} {
		out = append(out, Event{
			Name: m, Family: FamilyAgBOM, Source: SourceACS, Sync: true,
			Payload: "AgBOM document", Patch: "DecisionResponse (allow or deny)",
			PayloadFields: []string{"agbom"}, PatchFields: []string{"decision", "reasoning"},
			Fires: "When the agent reports its bill of materials (snapshot) or a change to it.",
		})
	}
	return out
}

// acsViews reads an ACS hook's payload (params.payload) and its metadata
// (Envelope.Context: agent_id, session_id, turn_id, user_id, ...).
//
//   - steps/toolCallRequest: the tool (tool.name; args are the arguments,
//     each argument's value unwrapped from {value, provenance}); intent's
//     description is the reasoning.
//   - steps/toolCallResult: the tool (tool.name, the args of the request it
//     answers when known); the outputs' values are the message text.
//   - steps/userMessage and steps/agentResponse: the message (role user or
//     agent; the content items' values joined); agentResponse's reasoning.
//   - protocols/MCP/*: the wrapped MCP message, as protocols/MCP reads it
//     (tools/call gives the tool); a payload that is the MCP params alone is
//     read as that method's params.
//   - the other hooks: agent, session and turn only (policies read text).
func acsViews(ev *warden.Event, p map[string]any) {
	md := ev.Envelope.Context
	ev.Agent = warden.Agent{ID: str(md, "agent_id")}
	// The request envelope's metadata.user_context.user_id; metadata.user_id
	// as some clients send it.
	ev.User = warden.User{ID: str(obj(md, "user_context"), "user_id")}
	if ev.User.ID == "" {
		ev.User.ID = str(md, "user_id")
	}
	ev.SessionID = str(md, "session_id")
	ev.TurnID = str(md, "turn_id")
	ev.StepID = ev.RequestID
	switch {
	case ev.Name == MethodToolCallRequest:
		ev.Tool = warden.Tool{Name: str(obj(p, "tool"), "name"), Args: acsArguments(obj(p, "arguments"))}
		ev.Reasoning = str(obj(p, "intent"), "description")
	case ev.Name == MethodToolCallResult:
		ev.Tool = warden.Tool{Name: str(obj(p, "tool"), "name")}
		if a := ev.Envelope.Answers; a != nil && (a.Name == ev.Tool.Name || ev.Tool.Name == "") {
			ev.Tool = *a
		}
	case ev.Name == MethodUserMessage:
		ev.Message = warden.Message{Role: "user", Text: acsContent(p["content"])}
	case ev.Name == MethodAgentResponse:
		ev.Message = warden.Message{Role: "agent", Text: acsContent(p["content"])}
		ev.Reasoning = str(p, "reasoning")
	case strings.HasPrefix(ev.Name, ACSMCPPrefix):
		msg := p
		if _, ok := p["method"]; !ok {
			if _, resp := p["result"]; !resp {
				msg = map[string]any{"method": strings.TrimPrefix(ev.Name, ACSMCPPrefix), "params": p}
			}
		}
		mcpViews(ev, msg)
	}
}

// acsArguments unwraps ACS tool arguments ({name: {value, provenance}}) to
// {name: value}; an argument that is not so wrapped is taken as it is.
func acsArguments(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if w, ok := v.(map[string]any); ok {
			if val, has := w["value"]; has {
				out[k] = val
				continue
			}
		}
		out[k] = v
	}
	return out
}

// acsContent joins the string values of an ACS content array ([{type,
// value, provenance}]) with newlines.
func acsContent(v any) string {
	items, _ := v.([]any)
	var b strings.Builder
	for _, it := range items {
		m, _ := it.(map[string]any)
		s, ok := m["value"].(string)
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}
