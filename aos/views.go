package aos

import (
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// The AOS methods (docs/conformance.md); the catalog owns the names.
const (
	MethodAgentTrigger           = catalog.MethodAgentTrigger
	MethodToolCallRequest        = catalog.MethodToolCallRequest
	MethodToolCallResult         = catalog.MethodToolCallResult
	MethodMessage                = catalog.MethodMessage
	MethodMemoryContextRetrieval = catalog.MethodMemoryContextRetrieval
	MethodMemoryStore            = catalog.MethodMemoryStore
	MethodKnowledgeRetrieval     = catalog.MethodKnowledgeRetrieval
	MethodMCP                    = catalog.MethodMCP
	MethodA2A                    = catalog.MethodA2A
	MethodPing                   = catalog.MethodPing
)

// The endpoint builds no views: the Decider does, with catalog.Views. What
// the endpoint knows beside the payload goes in the event's Envelope: the
// AOS wrapper's context and reasoning of a wrapped protocol message, and the
// tool of the request a result answers, from its correlation caches.

func getObj(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
func getStr(m map[string]any, k string) string         { v, _ := m[k].(string); return v }

// toolResult returns the ToolCallResult members of a toolCallResult step,
// nested under params.toolCallResult or flat in params.
func toolResult(params map[string]any) map[string]any {
	if n := getObj(params, "toolCallResult"); n != nil {
		return n
	}
	return params
}

// answers fills ev.Envelope.Answers with the tool of the request a result
// answers: a steps/toolCallResult by executionId, an MCP response by id.
func (h *Handler) answers(ev *warden.Event) {
	var t warden.Tool
	var ok bool
	switch {
	case ev.Name == MethodToolCallResult:
		t, ok = h.tools.Get(getStr(toolResult(ev.Payload), "executionId"))
	case ev.Name == MethodMCP && ev.Direction == warden.Inbound:
		if k, kok := idKey(ev.Payload["id"]); kok {
			t, ok = h.mcp.Get(k)
		}
	}
	if ok {
		answered := t // a copy, so t stays on the stack when nothing is answered
		ev.Envelope.Answers = &answered
	}
}

// remember puts the tool of a decided request in its correlation cache, for
// the result that follows.
func (h *Handler) remember(ev *warden.Event) {
	switch {
	case ev.Name == MethodToolCallRequest:
		h.tools.Put(getStr(getObj(ev.Payload, "toolCallRequest"), "executionId"), ev.Tool)
	case ev.Name == MethodMCP && getStr(ev.Payload, "method") == "tools/call":
		if k, ok := idKey(ev.Payload["id"]); ok {
			h.mcp.Put(k, ev.Tool)
		}
	}
}
