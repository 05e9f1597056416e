package catalog

import (
	"fmt"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
)

// Payload shapes: what the AOS spec requires of the payload of each AOS
// event (a method's params), and the type of every present field the views
// read. The AOS endpoint checks a request's params with them (reporting a
// ShapeError as invalid params); every other way in — hook dispatch, eval,
// the Go API — checks an event's payload with CheckPayload, so a malformed
// step is refused on every surface alike.

// A ShapeError names the field of a payload that is missing or has the
// wrong type, and why.
type ShapeError struct {
	Field  string // e.g. params.toolCallRequest.inputs[1].name
	Reason string // e.g. expected a string, got a number
}

// Error says what is wrong with the payload.
func (e *ShapeError) Error() string { return "invalid payload: " + e.Field + ": " + e.Reason }

// payloadShape says how an event's payload is checked.
type payloadShape uint8

const (
	anyShape      payloadShape = iota // not an AOS event: only its tool arguments (CheckArgs)
	stepShape                         // a steps/* method's params
	protocolShape                     // protocols/MCP, protocols/A2A: the JSON-RPC message
	a2aHookShape                      // an A2A hook method: the A2A JSON-RPC message
)

var payloadShapes = func() map[string]payloadShape {
	m := map[string]payloadShape{MethodMCP: protocolShape, MethodA2A: protocolShape}
	for _, s := range StepMethods {
		m[s] = stepShape
	}
	for _, s := range A2AHookMethods {
		m[s] = a2aHookShape
	}
	return m
}()

// CheckPayload validates the payload of an event decided outside the AOS
// endpoint as the endpoint validates its params: a steps/* payload against
// its method's schema; a protocols/MCP or protocols/A2A payload, or an A2A
// hook method's, as the JSON-RPC message it is. Of other events, a hook
// event's tool arguments sent as JSON text are held to the strict JSON
// rules (CheckArgs). The error is a *ShapeError, or CheckArgs's.
func CheckPayload(event string, payload map[string]any) error {
	var fe *ShapeError
	switch payloadShapes[event] {
	case stepShape:
		fe = CheckStepParams(event, payload)
	case protocolShape:
		fe = CheckProtocolMessage(event, payload, "payload")
	case a2aHookShape:
		fe = CheckProtocolMessage(MethodA2A, payload, "payload")
	}
	if fe != nil {
		return fe
	}
	return CheckArgs(event, payload) // hook events' arguments as JSON text
}

// RequiredObject returns the object m[key]; parent names m in the error
// when it is missing or not an object.
func RequiredObject(m map[string]any, parent, key string) (map[string]any, *ShapeError) {
	return wantObject(m, parent, key, true)
}

// CheckStepParams validates params, the params of the steps/* method
// method (its event's payload).
func CheckStepParams(method string, params map[string]any) *ShapeError {
	ctx, err := wantObject(params, "params", "context", true)
	if err != nil {
		return err
	}
	if err := checkContext(ctx, "params.context"); err != nil {
		return err
	}
	if err := wantString(params, "params", "reasoning", false); err != nil {
		return err
	}
	switch method {
	case MethodAgentTrigger:
		return checkTrigger(params)
	case MethodToolCallRequest:
		return checkToolCallRequest(params)
	case MethodToolCallResult:
		return checkToolCallResult(params)
	case MethodMessage:
		return checkMessageStep(params)
	case MethodMemoryContextRetrieval, MethodMemoryStore:
		mem, err := wantArray(params, "params", "memory", true)
		if err != nil {
			return err
		}
		return eachString(mem, "params.memory")
	case MethodKnowledgeRetrieval:
		return checkKnowledge(params)
	}
	return nil
}

func eachString(a []any, field string) *ShapeError {
	for i, v := range a {
		if _, ok := v.(string); !ok {
			return wrongType(index(field, i), "a string", v)
		}
	}
	return nil
}

func checkTrigger(params map[string]any) *ShapeError {
	const f = "params.trigger"
	t, err := wantObject(params, "params", "trigger", true)
	if err != nil {
		return err
	}
	if err := wantString(t, f, "type", false); err != nil {
		return err
	}
	content, err := wantArray(t, f, "content", false)
	if err != nil {
		return err
	}
	if err := checkParts(content, f+".content"); err != nil {
		return err
	}
	ev, err := wantObject(t, f, "event", false)
	if err != nil {
		return err
	}
	return wantStrings(ev, f+".event", "type", "id")
}

func checkToolCallRequest(params map[string]any) *ShapeError {
	const f = "params.toolCallRequest"
	tcr, err := wantObject(params, "params", "toolCallRequest", true)
	if err != nil {
		return err
	}
	if err := wantString(tcr, f, "executionId", true); err != nil {
		return err
	}
	if err := wantString(tcr, f, "toolId", true); err != nil {
		return err
	}
	inputs, err := wantArray(tcr, f, "inputs", true)
	if err != nil {
		return err
	}
	if err := eachObject(inputs, f+".inputs", func(in map[string]any, _ string) *ShapeError {
		if err := wantString(in, "", "name", true); err != nil {
			return err
		}
		return wantString(in, "", "id", false)
	}); err != nil {
		return err
	}
	return uniqueInputNames(inputs, f+".inputs")
}

// uniqueInputNames refuses two inputs of one tool call with the same name,
// or with names that differ only in case: the policies see one value per
// name (tool.args), while the tool may use the other one. It is the rule
// jsonstrict applies to the keys of a JSON object (jsonstrict.Clash, and
// so to the argument objects of MCP, ACS and the hooks), applied to a list
// of named values. The inputs are objects with a string name (checked
// before).
func uniqueInputNames(inputs []any, field string) *ShapeError {
	var buf [16]string
	names, folded := buf[:0], map[string]int(nil)
	for i, in := range inputs {
		b := in.(map[string]any)["name"].(string)
		j := jsonstrict.Clash(names, &folded, b)
		if j < 0 {
			names = append(names, b)
			continue
		}
		reason := fmt.Sprintf("duplicate input name %q (also %s)", b, index("inputs", j))
		if a := names[j]; a != b {
			reason = fmt.Sprintf("input names %q (%s) and %q differ only in case", a, index("inputs", j), b)
		}
		return &ShapeError{index(field, i) + ".name", reason}
	}
	return nil
}

// checkToolCallResult accepts both shapes: nested under
// params.toolCallResult (schema, seed 000) and flat in params (spec §4.6).
func checkToolCallResult(params map[string]any) *ShapeError {
	tr, f := params, "params"
	if _, nested := params["toolCallResult"]; nested {
		var err *ShapeError
		if tr, err = wantObject(params, "params", "toolCallResult", true); err != nil {
			return err
		}
		f = "params.toolCallResult"
	} else {
		_, hasExec := params["executionId"]
		_, hasResult := params["result"]
		if !hasExec && !hasResult {
			return missing("params", "toolCallResult")
		}
	}
	if err := wantString(tr, f, "executionId", true); err != nil {
		return err
	}
	r, err := wantObject(tr, f, "result", true)
	if err != nil {
		return err
	}
	outs, err := wantArray(r, f+".result", "outputs", false)
	if err != nil {
		return err
	}
	if err := checkParts(outs, f+".result.outputs"); err != nil {
		return err
	}
	if v, ok := r["isError"]; ok {
		if _, ok := v.(bool); !ok {
			return wrongType(f+".result.isError", "a boolean", v)
		}
	}
	return nil
}

func checkMessageStep(params map[string]any) *ShapeError {
	const f = "params.message"
	m, err := wantObject(params, "params", "message", true)
	if err != nil {
		return err
	}
	role, ok := m["role"]
	if !ok {
		return missing(f, "role")
	}
	if role != "user" && role != "agent" && role != "system" {
		return &ShapeError{f + ".role", "expected one of user, agent, system"}
	}
	content, err := wantArray(m, f, "content", true)
	if err != nil {
		return err
	}
	if err := checkParts(content, f+".content"); err != nil {
		return err
	}
	if err := wantString(m, f, "id", false); err != nil {
		return err
	}
	for _, k := range [...]string{"citations", "citation"} {
		cs, err := wantArray(params, "params", k, false)
		if err != nil {
			return err
		}
		if err := eachObject(cs, "params."+k, func(s map[string]any, _ string) *ShapeError {
			return wantStrings(s, "", "kind", "id", "name", "url")
		}); err != nil {
			return err
		}
	}
	return nil
}

func checkKnowledge(params map[string]any) *ShapeError {
	const f = "params.knowledgeStep"
	ks, err := wantObject(params, "params", "knowledgeStep", true)
	if err != nil {
		return err
	}
	if err := wantString(ks, f, "query", false); err != nil {
		return err
	}
	kw, err := wantArray(ks, f, "keywords", false)
	if err != nil {
		return err
	}
	if err := eachString(kw, f+".keywords"); err != nil {
		return err
	}
	results, err := wantArray(ks, f, "results", true)
	if err != nil {
		return err
	}
	return eachObject(results, f+".results", func(r map[string]any, _ string) *ShapeError {
		return wantStrings(r, "", "id", "content", "mimeType")
	})
}

// CheckWrapperParams validates the AOS members of params around the
// protocol message they wrap (params.message, params.payload): an optional
// StepContext (or A2A from/to context) and reasoning.
func CheckWrapperParams(params map[string]any) *ShapeError {
	if err := wantString(params, "params", "reasoning", false); err != nil {
		return err
	}
	ctx, err := wantObject(params, "params", "context", false)
	if err != nil {
		return err
	}
	if err := checkContext(ctx, "params.context"); err != nil {
		return err
	}
	for _, side := range [...]string{"from", "to"} {
		f := "params.context." + side
		s, err := wantObject(ctx, "params.context", side, false)
		if err != nil {
			return err
		}
		if err := wantString(s, f, "role", false); err != nil {
			return err
		}
		a, err := wantObject(s, f, "agent", false)
		if err != nil {
			return err
		}
		if err := checkAgent(a, f+".agent"); err != nil {
			return err
		}
	}
	return nil
}

// CheckProtocolMessage validates msg, the MCP or A2A JSON-RPC message of an
// event of method (MethodMCP, MethodA2A); field names msg in the error
// (params, params.message, payload).
func CheckProtocolMessage(method string, msg map[string]any, field string) *ShapeError {
	if err := wantString(msg, field, "method", false); err != nil {
		return err
	}
	if method == MethodMCP && !jsonrpc.LooksLikeMessage(msg) {
		return &ShapeError{field, "expected an MCP JSON-RPC message (jsonrpc, method, result or error)"}
	}
	params, err := wantObject(msg, field, "params", false)
	if err != nil {
		return err
	}
	if method == MethodMCP {
		if m, _ := msg["method"].(string); m != "tools/call" {
			return nil
		}
		pf := field + ".params"
		if params == nil {
			return missing(field, "params")
		}
		if err := wantString(params, pf, "name", true); err != nil {
			return err
		}
		_, err := wantObject(params, pf, "arguments", false)
		return err
	}
	if params != nil {
		return CheckA2AParams(params, field+".params")
	}
	if _, isRPC := msg["method"]; !isRPC {
		if r, ok := msg["result"].(map[string]any); ok {
			return checkA2AMessage(r, field+".result")
		}
		if !jsonrpc.LooksLikeMessage(msg) {
			return checkA2AMessage(msg, field)
		}
	}
	return nil
}

// CheckA2AParams validates the params of an A2A request: the message of
// message/send and message/stream. field names params in the error.
func CheckA2AParams(params map[string]any, field string) *ShapeError {
	m, err := wantObject(params, field, "message", false)
	if err != nil {
		return err
	}
	return checkA2AMessage(m, field+".message")
}

// checkA2AMessage validates the members of an A2A Message the views read.
func checkA2AMessage(m map[string]any, field string) *ShapeError {
	if err := wantString(m, field, "role", false); err != nil {
		return err
	}
	parts, err := wantArray(m, field, "parts", false)
	if err != nil {
		return err
	}
	return checkParts(parts, field+".parts")
}
