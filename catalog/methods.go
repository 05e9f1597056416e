package catalog

// The AOS methods (docs/conformance.md). The catalog name of each event is its
// method; the AOS endpoint, the gateways and the view builder share these.
const (
	MethodAgentTrigger           = "steps/agentTrigger"
	MethodToolCallRequest        = "steps/toolCallRequest"
	MethodToolCallResult         = "steps/toolCallResult"
	MethodMessage                = "steps/message"
	MethodMemoryContextRetrieval = "steps/memoryContextRetrieval"
	MethodMemoryStore            = "steps/memoryStore"
	MethodKnowledgeRetrieval     = "steps/knowledgeRetrieval"
	MethodMCP                    = "protocols/MCP"
	MethodA2A                    = "protocols/A2A"
	MethodPing                   = "ping"
)

// StepMethods lists the steps/* methods, in the order of the AOS spec.
var StepMethods = []string{
	MethodAgentTrigger, MethodToolCallRequest, MethodToolCallResult, MethodMessage,
	MethodMemoryContextRetrieval, MethodMemoryStore, MethodKnowledgeRetrieval,
}

// The A2A methods that are events: the seven A2A hook methods of seed 004
// (A2AHookMethods) in their 0.3 names, and the others the A2A proxy governs
// alike. A 1.0 wire name maps to one of these.
const (
	A2ASend        = "message/send"
	A2AStream      = "message/stream"
	A2AGet         = "tasks/get"
	A2ACancel      = "tasks/cancel"
	A2AResubscribe = "tasks/resubscribe"
	A2APushGet     = "tasks/pushNotificationConfig/get"
	A2APushSet     = "tasks/pushNotificationConfig/set"
)

// A2AHookMethods lists the A2A hook methods. Through AOS, their
// params.payload is the A2A JSON-RPC message and params.context holds the
// "from" and "to" sides of the exchange; the event's agent is
// context.from.agent, the side that sends.
var A2AHookMethods = []string{A2ASend, A2AStream, A2ACancel, A2AGet, A2APushGet, A2APushSet, A2AResubscribe}
