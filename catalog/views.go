package catalog

import (
	"github.com/wardenhq/warden"
)

// viewKind says how the views of an event are read from its payload.
type viewKind uint8

const (
	viewNone     viewKind = iota // not in the catalog: only the envelope's session
	viewStep                     // AOS steps/*: the payload carries its own context
	viewMCP                      // an MCP message
	viewA2A                      // an A2A message (protocols/A2A, the A2A methods)
	viewAGH                      // an AGH hook payload
	viewStandard                 // a Standard Agents hook payload
	viewACS                      // an ACS-only event (its payload in the ACS shape)
)

// viewKinds maps every event name to its kind, so building views costs one
// map lookup, not a catalog scan.
var viewKinds = func() map[string]viewKind {
	m := map[string]viewKind{MethodMCP: viewMCP, MethodA2A: viewA2A}
	for _, s := range StepMethods {
		m[s] = viewStep
	}
	for _, s := range A2AMethods {
		m[s] = viewA2A
	}
	for _, e := range all {
		if _, ok := m[e.Name]; ok {
			continue
		}
		switch e.Source {
		case SourceAGH:
			m[e.Name] = viewAGH
		case SourceStandardAgents:
			m[e.Name] = viewStandard
		case SourceACS:
			m[e.Name] = viewACS
		}
	}
	return m
}()

// Views is warden's one view builder (a warden.ViewBuilder): it turns an
// event — its name, payload and envelope, whatever surface carried it —
// into the variables every policy reads (docs/policies.md), so the same step
// gets the same views on every surface. The Decider runs it for every
// event, and again for every payload a guardian changes. It reads leniently
// (what does not fit is skipped): it also runs on rewritten payloads, which
// are not validated again.
//
//   - AOS steps/*: agent, user, session, turn and step from the payload's
//     context; reasoning; steps/toolCallRequest: the tool (name from
//     context.agent.tools by toolId, else the id; args from the inputs);
//     steps/toolCallResult: the tool of the request it answers
//     (Envelope.Answers); steps/message: the message (content or parts).
//   - protocols/MCP: context and reasoning from the envelope (the AOS
//     wrapper); a tools/call request gives the tool (server: Envelope.Server),
//     a response the tool of the request it answers; ToolChanges (the mcp
//     view) are Envelope.ToolChanges, a tools/list answer's changes
//     against the server's pinned tools.
//   - protocols/A2A and the A2A methods: context and reasoning from the
//     envelope, the agent being the context's agent, else its from side's,
//     else its to side's; the message of message/send and message/stream
//     requests, and of responses (a Message, a Task's status message, the
//     artifacts' text; 0.3 and 1.0 shapes, 1.0 role names mapped).
//   - AGH and Standard Agents hook events: see hookViews.
//   - anything on the ACS surface, and the ACS-only events on any surface:
//     see acsViews (the shared method names carry another payload shape on
//     the ACS wire than on AOS); provenance: the Provenance objects of the
//     payload's data-bearing fields (DataFields).
//
// Every view not read is empty; Tool.Args is never nil; SessionID falls
// back to Envelope.SessionID.
func Views(ev *warden.Event) {
	p := ev.Payload
	ev.Agent, ev.User = warden.Agent{}, warden.User{}
	ev.SessionID, ev.TurnID, ev.StepID, ev.Reasoning = "", "", "", ""
	ev.Tool, ev.Message = warden.Tool{}, warden.Message{}
	ev.ToolChanges = nil
	kind := viewKinds[ev.Name]
	ev.Provenance = nil
	if ev.Surface == warden.SurfaceACS || kind == viewACS {
		acsViews(ev, p)
		provenanceViews(ev, p)
		if ev.SessionID == "" {
			ev.SessionID = ev.Envelope.SessionID
		}
		if ev.Tool.Args == nil {
			ev.Tool.Args = map[string]any{}
		}
		return
	}
	switch kind {
	case viewStep:
		stepViews(ev, p)
	case viewMCP:
		inferDirection(ev, p)
		contextViews(ev, ev.Envelope.Context)
		ev.Reasoning = ev.Envelope.Reasoning
		mcpViews(ev, p)
		ev.ToolChanges = ev.Envelope.ToolChanges
	case viewA2A:
		inferDirection(ev, p)
		contextViews(ev, ev.Envelope.Context)
		ev.Reasoning = ev.Envelope.Reasoning
		a2aViews(ev, p)
	case viewAGH:
		aghViews(ev, p)
	case viewStandard:
		standardViews(ev, p)
	}
	if ev.SessionID == "" {
		ev.SessionID = ev.Envelope.SessionID
	}
	if ev.Tool.Args == nil {
		ev.Tool.Args = map[string]any{}
	}
}

var _ warden.ViewBuilder = Views

// MessageDirection is the direction of a wrapped protocol message as the
// agent sees it: a request or notification (a method) goes out, a result
// or error comes in; an A2A message from the user goes out, any other
// comes in.
func MessageDirection(msg map[string]any) string {
	if _, ok := msg["method"]; ok {
		return warden.Outbound
	}
	if _, ok := msg["result"]; ok {
		return warden.Inbound
	}
	if _, ok := msg["error"]; ok {
		return warden.Inbound
	}
	if r, _ := msg["role"].(string); r == "user" {
		return warden.Outbound
	}
	return warden.Inbound
}

// inferDirection gives a protocol message that arrived without a direction
// (eval, hook dispatch, the Go API) the one its shape says, as the AOS
// endpoint does, so the same message gets the same answer on every
// surface; a surface that knows the direction (the gateways) keeps it.
func inferDirection(ev *warden.Event, msg map[string]any) {
	if ev.Direction != "" || msg == nil {
		return
	}
	_, role := msg["role"]
	if _, ok := msg["jsonrpc"]; ok || role || msg["method"] != nil || msg["result"] != nil || msg["error"] != nil {
		ev.Direction = MessageDirection(msg)
	}
}

// contextViews reads a step context: an AOS StepContext (agent, user,
// session, turnId, stepId), or the from/to sides of an A2A exchange.
func contextViews(ev *warden.Event, ctx map[string]any) {
	if ctx == nil {
		return
	}
	a := obj(ctx, "agent")
	if a == nil {
		a = obj(obj(ctx, "from"), "agent")
	}
	if a == nil {
		a = obj(obj(ctx, "to"), "agent")
	}
	ev.Agent = agentView(a)
	u := obj(ctx, "user")
	org := obj(u, "organization")
	ev.User = warden.User{
		ID: str(u, "id"), Email: str(u, "email"), Name: str(u, "name"),
		Organization: firstOf(str(org, "name"), str(org, "id")),
	}
	ev.SessionID = str(obj(ctx, "session"), "id")
	ev.TurnID = str(ctx, "turnId")
	ev.StepID = str(ctx, "stepId")
}

// agentView reads an AOS Agent (or an A2A agent, which has a url and
// usually no id: the url is its id).
func agentView(a map[string]any) warden.Agent {
	model := obj(a, "model")
	return warden.Agent{
		ID:       firstOf(str(a, "id"), str(a, "url")),
		Name:     str(a, "name"),
		Version:  str(a, "version"),
		Provider: str(obj(a, "provider"), "name"),
		Model:    firstOf(str(model, "name"), str(model, "id")),
	}
}

// stepViews reads an AOS steps/* payload (the params).
func stepViews(ev *warden.Event, p map[string]any) {
	ctx := obj(p, "context")
	contextViews(ev, ctx)
	ev.Reasoning = str(p, "reasoning")
	switch ev.Name {
	case MethodToolCallRequest:
		ev.Tool = ToolCallRequestTool(p)
	case MethodToolCallResult:
		if t := ev.Envelope.Answers; t != nil {
			ev.Tool = *t
		}
	case MethodMessage:
		ev.Message = partsMessage(obj(p, "message"))
	}
}

// ToolCallRequestTool returns the tool view of a steps/toolCallRequest
// payload: its name from context.agent.tools by toolId, else the toolId;
// its arguments from the named inputs. The AOS endpoint remembers it by
// executionId for the result that follows.
func ToolCallRequestTool(p map[string]any) warden.Tool {
	tcr := obj(p, "toolCallRequest")
	id := str(tcr, "toolId")
	name := id
	for _, t := range arr(obj(obj(p, "context"), "agent"), "tools") {
		t, _ := t.(map[string]any)
		if n := str(t, "name"); n != "" && str(t, "id") == id {
			name = n
			break
		}
	}
	inputs := arr(tcr, "inputs")
	args := make(map[string]any, len(inputs))
	for _, in := range inputs {
		in, _ := in.(map[string]any)
		if n, ok := in["name"].(string); ok {
			args[n] = in["value"]
		}
	}
	return warden.Tool{ID: id, Name: name, Args: args}
}

// mcpViews reads an MCP message.
func mcpViews(ev *warden.Event, msg map[string]any) {
	if t, ok := MCPToolCall(msg); ok {
		t.Server = ev.Envelope.Server
		ev.Tool = t
		return
	}
	if _, isReq := msg["method"]; !isReq && ev.Envelope.Answers != nil {
		ev.Tool = *ev.Envelope.Answers
	}
}

// MCPToolCall returns the tool view of an MCP tools/call request (its name
// and arguments; Args never nil, Server unset); ok is false for any other
// message. Surfaces use it to remember the tool a response will answer.
func MCPToolCall(msg map[string]any) (t warden.Tool, ok bool) {
	if str(msg, "method") != "tools/call" {
		return warden.Tool{}, false
	}
	params := obj(msg, "params")
	t = warden.Tool{Name: str(params, "name"), Args: obj(params, "arguments")}
	if t.Args == nil {
		t.Args = map[string]any{}
	}
	return t, true
}
