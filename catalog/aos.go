package catalog

import (
	"github.com/wardenhq/warden"
)

// AOS families.
const (
	FamilySteps     = "steps"     // the steps/* methods
	FamilyProtocols = "protocols" // protocols/MCP and protocols/A2A
	FamilyA2A       = "a2a"       // the A2A hook methods (message/send, ...)
)

// aosPatch is what a Guardian answers to every AOS method (the schema type):
// allow, deny, or modify with the whole modified request (docs/conformance.md).
const aosPatch = "ASOPSuccessResult"

// aosPatchFields are the ASOPSuccessResult fields a Guardian sets.
var aosPatchFields = []string{"decision", "message", "reasoning", "reasonCode", "modifiedRequest"}

// stepInfo describes one steps/* method: its own params member and when the
// Guardian is called (seed 000).
var stepInfo = map[string]struct {
	payload, member, fires string
}{
	MethodAgentTrigger: {"AgentTriggerStep params", "trigger",
		"After content is extracted from a trigger (email, chat, schedule) and before the agent is activated."},
	MethodToolCallRequest: {"ToolCallRequestStep params", "toolCallRequest",
		"After the agent decides on a tool call and its inputs are extracted, before the tool is called."},
	MethodToolCallResult: {"ToolCallResultStep params", "toolCallResult",
		"When a tool call completes, before the agent processes the result."},
	MethodMessage: {"MessageStep params", "message",
		"When a user prompt reaches the agent (role user) or before the agent's response is sent back (role agent)."},
	MethodMemoryContextRetrieval: {"MemoryContextRetrievalStep params", "memory",
		"After memory (e.g. conversation history) is retrieved, before it is attached to the context window."},
	MethodMemoryStore: {"MemoryStoreStep params", "memory",
		"Before the agent stores data into the memory store."},
	MethodKnowledgeRetrieval: {"KnowledgeRetrievalStep params", "knowledgeStep",
		"After knowledge is retrieved from a source, before it reaches the LLM."},
}

// a2aFires says when each A2A hook method fires, outbound (the observed agent
// sends the request) and inbound (the response comes back).
var a2aFires = map[string]string{
	"message/send":                     "sends a message to a server agent to start or continue an interaction",
	"message/stream":                   "sends a message and subscribes to real-time task updates",
	"tasks/cancel":                     "asks a server agent to cancel a task",
	"tasks/get":                        "asks a server agent for a task's details or status",
	"tasks/pushNotificationConfig/get": "asks for a task's push-notification configuration",
	"tasks/pushNotificationConfig/set": "updates a task's push-notification configuration",
	"tasks/resubscribe":                "resubscribes to a task's updates",
}

// Field lists of a wrapped JSON-RPC protocol message, by direction.
var (
	rpcRequestFields  = []string{"jsonrpc", "id", "method", "params"}
	rpcResponseFields = []string{"jsonrpc", "id", "result", "error"}
)

// aosEvents returns the AOS methods: the steps/* methods, then protocols/MCP
// and protocols/A2A, then the A2A hook methods, each protocol entry outbound
// then inbound. ping is a health check, not an event, and is left out.
func aosEvents() []Event {
	var out []Event
	for _, m := range StepMethods {
		info := stepInfo[m]
		out = append(out, Event{
			Name: m, Family: FamilySteps, Source: SourceAOS, Sync: true,
			Payload: info.payload, Patch: aosPatch,
			PayloadFields: []string{info.member, "context", "reasoning"},
			PatchFields:   aosPatchFields, Fires: info.fires,
		})
	}
	out = append(out,
		protocol(MethodMCP, warden.Outbound, "MCPMessage (request or notification)",
			"Before the agent sends an MCP message to a remote MCP server."),
		protocol(MethodMCP, warden.Inbound, "MCPMessage (response)",
			"When the agent receives an MCP message from a remote MCP server, before it processes it."),
		protocol(MethodA2A, warden.Outbound, "A2AMessage (request)",
			"Before the agent sends an A2A message to another agent."),
		protocol(MethodA2A, warden.Inbound, "A2AMessage (response)",
			"When the agent receives an A2A message from another agent, before it processes it."),
	)
	for _, m := range A2AHookMethods {
		what := a2aFires[m]
		out = append(out,
			a2aHook(m, warden.Outbound, "A2A "+m+" request",
				"Before the observed client agent "+what+"."),
			a2aHook(m, warden.Inbound, "A2A "+m+" response",
				"When the response to "+m+" (the client agent "+what+") comes back, before the agent processes it."),
		)
	}
	return out
}

func protocol(method, dir, payload, fires string) Event {
	return Event{
		Name: method, Family: FamilyProtocols, Source: SourceAOS, Sync: true, Direction: dir,
		Payload: payload, Patch: aosPatch, PayloadFields: rpcFields(dir),
		PatchFields: aosPatchFields, Fires: fires,
	}
}

func a2aHook(method, dir, payload, fires string) Event {
	return Event{
		Name: method, Family: FamilyA2A, Source: SourceAOS, Sync: true, Direction: dir,
		Payload: payload, Patch: aosPatch, PayloadFields: rpcFields(dir),
		PatchFields: aosPatchFields, Fires: fires,
	}
}

// rpcFields: the event payload of a protocol event is the protocol message
// itself, whichever wrapping carried it (docs/policies.md).
func rpcFields(dir string) []string {
	if dir == warden.Outbound {
		return rpcRequestFields
	}
	return rpcResponseFields
}
