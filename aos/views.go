package aos

import (
	"strings"

	"github.com/wardenhq/warden"
)

// The view builders are lenient: they read what fits and skip what does not,
// because Normalize runs them on payloads a policy has rewritten, which are
// not validated again.

func getObj(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
func getArr(m map[string]any, k string) []any          { v, _ := m[k].([]any); return v }
func getStr(m map[string]any, k string) string         { v, _ := m[k].(string); return v }

// firstStr returns the first non-empty string member of m among keys.
func firstStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := getStr(m, k); s != "" {
			return s
		}
	}
	return ""
}

// agentView reads an AOS Agent (or an A2A agent, which has a url and no id).
func agentView(a map[string]any) warden.Agent {
	model := getObj(a, "model")
	return warden.Agent{
		ID:       firstStr(a, "id", "url"),
		Name:     getStr(a, "name"),
		Version:  getStr(a, "version"),
		Provider: getStr(getObj(a, "provider"), "name"),
		Model:    firstStr(model, "name", "id"),
	}
}

// contextViews fills the views a StepContext carries: agent, user, session,
// turn and step ids.
func contextViews(ev *warden.Event, ctx map[string]any) {
	ev.Agent = agentView(getObj(ctx, "agent"))
	u := getObj(ctx, "user")
	org := getObj(u, "organization")
	ev.User = warden.User{
		ID: getStr(u, "id"), Email: getStr(u, "email"), Name: getStr(u, "name"),
		Organization: firstStr(org, "name", "id"),
	}
	ev.SessionID = getStr(getObj(ctx, "session"), "id")
	ev.TurnID = getStr(ctx, "turnId")
	ev.StepID = getStr(ctx, "stepId")
}

// PartsText joins, newline-separated, the text of a message's text parts:
// A2A 0.3 and AOS parts {"kind":"text","text"} and A2A 1.0 parts {"text"}
// (no kind). The A2A proxy builds its message view with it too.
func PartsText(parts []any) string {
	var b strings.Builder
	n := 0
	for _, v := range parts {
		p, _ := v.(map[string]any)
		t, ok := p["text"].(string)
		if !ok {
			continue
		}
		if k, has := p["kind"]; has && k != "text" {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t)
		n++
	}
	return b.String()
}

// messageView reads an AOS Message (content) or an A2A Message (parts).
func messageView(m map[string]any) warden.Message {
	if m == nil {
		return warden.Message{}
	}
	parts := getArr(m, "content")
	if parts == nil {
		parts = getArr(m, "parts")
	}
	return warden.Message{Role: getStr(m, "role"), Text: PartsText(parts)}
}

// toolRequestView reads a ToolCallRequest: the tool's name comes from
// context.agent.tools by toolId, else it is the toolId.
func toolRequestView(tcr, ctx map[string]any) warden.Tool {
	id := getStr(tcr, "toolId")
	name := id
	for _, t := range getArr(getObj(ctx, "agent"), "tools") {
		t, _ := t.(map[string]any)
		if n := getStr(t, "name"); n != "" && getStr(t, "id") == id {
			name = n
			break
		}
	}
	inputs := getArr(tcr, "inputs")
	args := make(map[string]any, len(inputs))
	for _, in := range inputs {
		in, _ := in.(map[string]any)
		if n, ok := in["name"].(string); ok {
			args[n] = in["value"]
		}
	}
	return warden.Tool{ID: id, Name: name, Args: args}
}

// toolResult returns the ToolCallResult members of a toolCallResult step,
// nested under params.toolCallResult or flat in params.
func toolResult(params map[string]any) map[string]any {
	if n := getObj(params, "toolCallResult"); n != nil {
		return n
	}
	return params
}

// stepViews rebuilds every view of a steps/* event from its payload (the
// params). It is the Normalize of step events.
func (h *Handler) stepViews(ev *warden.Event) {
	p := ev.Payload
	ctx := getObj(p, "context")
	contextViews(ev, ctx)
	ev.Reasoning = getStr(p, "reasoning")
	ev.Tool, ev.Message = warden.Tool{}, warden.Message{}
	switch ev.Name {
	case MethodToolCallRequest:
		ev.Tool = toolRequestView(getObj(p, "toolCallRequest"), ctx)
	case MethodToolCallResult:
		if t, ok := h.tools.get(getStr(toolResult(p), "executionId")); ok {
			ev.Tool = t
		}
	case MethodMessage:
		ev.Message = messageView(getObj(p, "message"))
	}
	if ev.Tool.Args == nil {
		ev.Tool.Args = map[string]any{}
	}
}

// a2aMessage returns the A2A Message an A2A JSON-RPC message carries: the
// params.message of a message/send or message/stream request, or a result
// that is a Message (or a Task's status message).
func a2aMessage(msg map[string]any) map[string]any {
	if m, isReq := msg["method"]; isReq {
		if m == "message/send" || m == "message/stream" {
			return getObj(getObj(msg, "params"), "message")
		}
		return nil
	}
	if r := getObj(msg, "result"); r != nil {
		if _, ok := r["parts"]; ok {
			return r
		}
		return getObj(getObj(r, "status"), "message")
	}
	if _, ok := msg["parts"]; ok { // a bare A2A Message
		return msg
	}
	return nil
}

// protocolViews rebuilds the tool and message views of an MCP or A2A event
// from its payload (the protocol message). It is their Normalize; agent,
// user and ids come from the AOS wrapping and are kept.
func (h *Handler) protocolViews(ev *warden.Event) {
	msg := ev.Payload
	ev.Tool, ev.Message = warden.Tool{}, warden.Message{}
	if ev.Name == MethodMCP {
		if t, ok := MCPToolCall(msg); ok {
			ev.Tool = t
		} else if _, isReq := msg["method"]; !isReq {
			if k, ok := idKey(msg["id"]); ok {
				ev.Tool, _ = h.mcp.get(k)
			}
		}
	} else {
		ev.Message = messageView(a2aMessage(msg))
	}
	if ev.Tool.Args == nil {
		ev.Tool.Args = map[string]any{}
	}
}

// MCPToolCall returns the tool view of an MCP tools/call request (its name
// and arguments; Args never nil); ok is false for any other message. The MCP
// gateways use it so tool policies read an MCP call the same way on every
// surface; they set Tool.Server themselves.
func MCPToolCall(msg map[string]any) (t warden.Tool, ok bool) {
	if getStr(msg, "method") != "tools/call" {
		return warden.Tool{}, false
	}
	params := getObj(msg, "params")
	t = warden.Tool{Name: getStr(params, "name"), Args: getObj(params, "arguments")}
	if t.Args == nil {
		t.Args = map[string]any{}
	}
	return t, true
}
