package aosclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// kind says how an event maps to an AOS request and back.
type kind uint8

const (
	kindStep       kind = iota + 1 // steps/*: params is the payload
	kindProtocol                   // protocols/MCP, protocols/A2A: params.message
	kindA2AHook                    // message/send, ...: params.payload
	kindOther                      // another method on the aos surface: params is the payload
	kindToolCall                   // a hook event sent as steps/toolCallRequest
	kindToolResult                 // a hook event sent as steps/toolCallResult
	kindMessage                    // a hook event sent as steps/message
)

// hookRoute says how a hook event maps to an AOS step.
type hookRoute struct {
	kind kind
	role string // of steps/message
	// fields are the payload members a modify writes back to: tool_input,
	// tool_result, or the first string member among the message fields.
	// None: a modify cannot be mapped back.
	fields []string
}

// hookRoutes is the table of hook events with an AOS counterpart. Every
// other hook event abstains.
//
//	tool.pre_call          → steps/toolCallRequest; modify → tool_input
//	before_store_tool_result, after_tool_call_success, after_tool_call_failure
//	                       → steps/toolCallRequest; modify unsupported
//	tool.post_call         → steps/toolCallResult;  modify → tool_result
//	input.pre_submit       → steps/message (user);  modify → message, prompt or text
//	prompt.post_assemble   → steps/message (user);  modify → prompt
//	message.end            → steps/message (agent); modify → text
var hookRoutes = map[string]hookRoute{
	"tool.pre_call":            {kind: kindToolCall, fields: []string{"tool_input"}},
	"before_store_tool_result": {kind: kindToolCall},
	"after_tool_call_success":  {kind: kindToolCall},
	"after_tool_call_failure":  {kind: kindToolCall},
	"tool.post_call":           {kind: kindToolResult, fields: []string{"tool_result"}},
	"input.pre_submit":         {kind: kindMessage, role: "user", fields: []string{"message", "prompt", "text"}},
	"prompt.post_assemble":     {kind: kindMessage, role: "user", fields: []string{"prompt"}},
	"message.end":              {kind: kindMessage, role: "agent", fields: []string{"text"}},
}

// stepKeys names the params member holding each step's object, where a
// Joch-style modifiedRequest fragment is merged; "" merges into params.
var stepKeys = map[string]string{
	catalog.MethodAgentTrigger:       "trigger",
	catalog.MethodToolCallRequest:    "toolCallRequest",
	catalog.MethodToolCallResult:     "toolCallResult",
	catalog.MethodMessage:            "message",
	catalog.MethodKnowledgeRetrieval: "knowledgeStep",
}

var aosKinds = func() map[string]kind {
	m := map[string]kind{catalog.MethodMCP: kindProtocol, catalog.MethodA2A: kindProtocol}
	for _, s := range catalog.StepMethods {
		m[s] = kindStep
	}
	for _, s := range catalog.A2AHookMethods {
		m[s] = kindA2AHook
	}
	return m
}()

// route is how one event is sent, and what was sent, to map the answer back.
type route struct {
	kind     kind
	method   string
	stepKey  string
	hook     hookRoute
	sent     map[string]any // the params sent, decoded
	injected bool           // sent has a context the payload lacked
}

// routeOf returns how ev is sent, or nil when it has no AOS counterpart.
func routeOf(ev *warden.Event) *route {
	if k, ok := aosKinds[ev.Name]; ok {
		return &route{kind: k, method: ev.Name, stepKey: stepKeys[ev.Name]}
	}
	if ev.Surface == warden.SurfaceAOS {
		if ev.Name == catalog.MethodPing || ev.Name == "" {
			return nil
		}
		return &route{kind: kindOther, method: ev.Name}
	}
	h, ok := hookRoutes[ev.Name]
	if !ok {
		return nil
	}
	r := &route{kind: h.kind, hook: h}
	switch h.kind {
	case kindToolCall:
		r.method = catalog.MethodToolCallRequest
	case kindToolResult:
		r.method = catalog.MethodToolCallResult
	default:
		r.method = catalog.MethodMessage
	}
	r.stepKey = stepKeys[r.method]
	return r
}

// params builds the params of the request for ev; id is the request's id.
func (r *route) params(ev *warden.Event, id string) (any, error) {
	switch r.kind {
	case kindStep, kindOther:
		if _, ok := ev.Payload["context"].(map[string]any); ok || r.kind == kindOther {
			r.sent = ev.Payload
			if r.sent == nil {
				r.sent = map[string]any{}
			}
			if ev.Raw != nil && json.Valid(ev.Raw) {
				return json.RawMessage(ev.Raw), nil
			}
			return r.sent, nil
		}
		p := make(map[string]any, len(ev.Payload)+1)
		for k, v := range ev.Payload {
			p[k] = v
		}
		p["context"] = stepContext(ev)
		r.sent, r.injected = p, true
		return p, nil

	case kindProtocol, kindA2AHook:
		key := "message"
		if r.kind == kindA2AHook {
			key = "payload"
		}
		var msg any = ev.Payload
		if ev.Payload == nil {
			return nil, errors.New("the event has no protocol message")
		}
		if ev.Raw != nil && json.Valid(ev.Raw) {
			msg = json.RawMessage(ev.Raw)
		}
		p := map[string]any{key: msg, "context": stepContext(ev)}
		if ev.Reasoning != "" {
			p["reasoning"] = ev.Reasoning
		}
		r.sent = p
		return p, nil

	case kindToolCall:
		name, id2, args := toolView(ev)
		names := make([]string, 0, len(args))
		for k := range args {
			names = append(names, k)
		}
		sort.Strings(names)
		inputs := make([]any, 0, len(names))
		for _, n := range names {
			inputs = append(inputs, map[string]any{"name": n, "value": args[n]})
		}
		r.sent = r.stepParams(ev, map[string]any{"executionId": id2, "toolId": name, "inputs": inputs})
		return r.sent, nil

	case kindToolResult:
		_, id2, _ := toolView(ev)
		outputs := []any{}
		switch v := ev.Payload["tool_result"].(type) {
		case nil:
		case string:
			outputs = append(outputs, textPart(v))
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("encoding tool_result: %w", err)
			}
			outputs = append(outputs, textPart(string(b)))
		}
		r.sent = r.stepParams(ev, map[string]any{"executionId": id2,
			"result": map[string]any{"outputs": outputs, "isError": false}})
		return r.sent, nil

	case kindMessage:
		text := ev.Message.Text
		if text == "" {
			for _, f := range r.hook.fields {
				if s, ok := ev.Payload[f].(string); ok {
					text = s
					break
				}
			}
		}
		r.sent = r.stepParams(ev, map[string]any{"role": r.hook.role, "id": id,
			"content": []any{textPart(text)}})
		return r.sent, nil
	}
	return nil, fmt.Errorf("no AOS request for %s", ev.Name)
}

// stepParams wraps a mapped hook event's step object with reasoning and
// the minimal context.
func (r *route) stepParams(ev *warden.Event, step map[string]any) map[string]any {
	p := map[string]any{r.stepKey: step, "context": stepContext(ev)}
	if ev.Reasoning != "" {
		p["reasoning"] = ev.Reasoning
	}
	return p
}

func textPart(s string) map[string]any { return map[string]any{"kind": "text", "text": s} }

// toolView returns the tool's name, call id and arguments: the event's Tool
// view, or, where it is empty, the AGH payload's tool_name, tool_call_id and
// tool_input.
func toolView(ev *warden.Event) (name, id string, args map[string]any) {
	name, id, args = ev.Tool.Name, ev.Tool.ID, ev.Tool.Args
	if name == "" {
		name, _ = ev.Payload["tool_name"].(string)
	}
	if id == "" {
		id, _ = ev.Payload["tool_call_id"].(string)
	}
	if len(args) == 0 {
		args, _ = ev.Payload["tool_input"].(map[string]any)
	}
	return name, id, args
}

// stepContext is the minimal AOS StepContext of ev: agent, session, turn
// and step ids, the time, and the user when known.
func stepContext(ev *warden.Event) map[string]any {
	agent := map[string]any{"id": ev.Agent.ID, "name": ev.Agent.Name}
	if ev.Agent.Version != "" {
		agent["version"] = ev.Agent.Version
	}
	ctx := map[string]any{
		"agent":     agent,
		"session":   map[string]any{"id": ev.SessionID},
		"turnId":    ev.TurnID,
		"stepId":    ev.StepID,
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	if ev.User.ID != "" || ev.User.Email != "" {
		u := map[string]any{}
		for k, v := range map[string]string{"id": ev.User.ID, "email": ev.User.Email, "name": ev.User.Name} {
			if v != "" {
				u[k] = v
			}
		}
		ctx["user"] = u
	}
	return ctx
}

// toHook maps the modified params of a translated hook event back to its
// payload: a copy of ev.Payload with the one member the route names
// replaced.
func (r *route) toHook(ev *warden.Event, params map[string]any) (map[string]any, error) {
	if len(r.hook.fields) == 0 {
		return nil, fmt.Errorf("%s has no member a modified %s maps to", ev.Name, r.method)
	}
	step, ok := params[r.stepKey].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("modified params have no %s object", r.stepKey)
	}
	sentStep, _ := r.sent[r.stepKey].(map[string]any)
	out := payload.Clone(ev.Payload)
	switch r.kind {
	case kindToolCall:
		if t, has := step["toolId"]; has && t != sentStep["toolId"] {
			return nil, errors.New("toolCallRequest.toolId changed; only inputs map back to tool_input")
		}
		inputs, ok := step["inputs"].([]any)
		if !ok {
			return nil, errors.New("toolCallRequest.inputs is not an array")
		}
		args := make(map[string]any, len(inputs))
		for i, in := range inputs {
			in, _ := in.(map[string]any)
			n, ok := in["name"].(string)
			if !ok {
				return nil, fmt.Errorf("toolCallRequest.inputs[%d] has no string name", i)
			}
			args[n] = in["value"]
		}
		out["tool_input"] = args

	case kindToolResult:
		res, _ := step["result"].(map[string]any)
		text, err := partsText(res, "outputs")
		if err != nil {
			return nil, fmt.Errorf("toolCallResult.result: %w", err)
		}
		switch ev.Payload["tool_result"].(type) {
		case string, nil:
			out["tool_result"] = text
		default:
			var v any
			if json.Unmarshal([]byte(text), &v) != nil {
				return nil, errors.New("tool_result is structured and the modified outputs are not JSON")
			}
			out["tool_result"] = v
		}

	case kindMessage:
		text, err := partsText(step, "content")
		if err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		field := ""
		for _, f := range r.hook.fields {
			if _, ok := ev.Payload[f].(string); ok {
				field = f
				break
			}
		}
		if field == "" {
			return nil, fmt.Errorf("the payload has no string %s to replace", strings.Join(r.hook.fields, " or "))
		}
		out[field] = text
	}
	return out, nil
}

// partsText joins the text of the text parts in obj[key], newline-separated.
func partsText(obj map[string]any, key string) (string, error) {
	parts, ok := obj[key].([]any)
	if !ok {
		return "", fmt.Errorf("%s is not an array", key)
	}
	var texts []string
	for i, p := range parts {
		p, _ := p.(map[string]any)
		if k, has := p["kind"]; has && k != "text" {
			return "", fmt.Errorf("%s[%d] is a %v part; only text maps back", key, i, k)
		}
		t, ok := p["text"].(string)
		if !ok {
			return "", fmt.Errorf("%s[%d] has no text", key, i)
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n"), nil
}
