package aos

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonstrict"
)

// checkStep validates the params of a steps/* method.
func checkStep(method string, params map[string]any) *fieldError {
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

func eachString(a []any, field string) *fieldError {
	for i, v := range a {
		if _, ok := v.(string); !ok {
			return wrongType(index(field, i), "a string", v)
		}
	}
	return nil
}

func checkTrigger(params map[string]any) *fieldError {
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

func checkToolCallRequest(params map[string]any) *fieldError {
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
	if err := eachObject(inputs, f+".inputs", func(in map[string]any, _ string) *fieldError {
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
// jsonstrict applies to the keys of a JSON object (and so to the argument
// objects of MCP, ACS and the hooks), applied to a list of named values.
// The inputs are objects with a string name (checked before).
func uniqueInputNames(inputs []any, field string) *fieldError {
	name := func(i int) string { return inputs[i].(map[string]any)["name"].(string) }
	dup := func(i, j int) *fieldError {
		a, b := name(j), name(i)
		reason := fmt.Sprintf("duplicate input name %q (also %s)", b, index("inputs", j))
		if a != b {
			reason = fmt.Sprintf("input names %q (%s) and %q differ only in case", a, index("inputs", j), b)
		}
		return &fieldError{index(field, i) + ".name", reason}
	}
	if len(inputs) <= smallObject {
		for i := 1; i < len(inputs); i++ {
			for j := 0; j < i; j++ {
				if strings.EqualFold(name(j), name(i)) {
					return dup(i, j)
				}
			}
		}
		return nil
	}
	seen := make(map[string]int, len(inputs)) // folded name → first index
	for i := range inputs {
		k := jsonstrict.FoldKey(name(i))
		if j, ok := seen[k]; ok {
			return dup(i, j)
		}
		seen[k] = i
	}
	return nil
}

// checkToolCallResult accepts both shapes: nested under
// params.toolCallResult (schema, seed 000) and flat in params (spec §4.6).
func checkToolCallResult(params map[string]any) *fieldError {
	tr, f := params, "params"
	if _, nested := params["toolCallResult"]; nested {
		var err *fieldError
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

func checkMessageStep(params map[string]any) *fieldError {
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
		return &fieldError{f + ".role", "expected one of user, agent, system"}
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
		if err := eachObject(cs, "params."+k, func(s map[string]any, _ string) *fieldError {
			return wantStrings(s, "", "kind", "id", "name", "url")
		}); err != nil {
			return err
		}
	}
	return nil
}

func checkKnowledge(params map[string]any) *fieldError {
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
	return eachObject(results, f+".results", func(r map[string]any, _ string) *fieldError {
		return wantStrings(r, "", "id", "content", "mimeType")
	})
}

// checkWrapper validates the AOS members around a wrapped protocol message:
// an optional StepContext (or A2A from/to context) and reasoning.
func checkWrapper(params map[string]any) *fieldError {
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

// checkProtocol validates a wrapped MCP or A2A message at field.
func checkProtocol(method string, msg map[string]any, field string) *fieldError {
	if err := wantString(msg, field, "method", false); err != nil {
		return err
	}
	if method == MethodMCP && !isRPCMessage(msg) {
		return &fieldError{field, "expected an MCP JSON-RPC message (jsonrpc, method, result or error)"}
	}
	params, err := wantObject(msg, field, "params", false)
	if err != nil {
		return err
	}
	if method == MethodMCP {
		if getStr(msg, "method") != "tools/call" {
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
		return checkA2AParams(params, field+".params")
	}
	if _, isRPC := msg["method"]; !isRPC {
		if r, ok := msg["result"].(map[string]any); ok {
			return checkA2AMessage(r, field+".result")
		}
		if !isRPCMessage(msg) {
			return checkA2AMessage(msg, field)
		}
	}
	return nil
}

// checkA2AParams validates the params of an A2A request: the message of
// message/send and message/stream.
func checkA2AParams(params map[string]any, field string) *fieldError {
	m, err := wantObject(params, field, "message", false)
	if err != nil {
		return err
	}
	return checkA2AMessage(m, field+".message")
}

// checkA2AMessage validates the members of an A2A Message the views read.
func checkA2AMessage(m map[string]any, field string) *fieldError {
	if err := wantString(m, field, "role", false); err != nil {
		return err
	}
	parts, err := wantArray(m, field, "parts", false)
	if err != nil {
		return err
	}
	return checkParts(parts, field+".parts")
}

// CheckPayload validates the payload of an AOS event decided outside the
// AOS endpoint (hook dispatch, eval, the Go API) as the endpoint validates
// its params, so a malformed step is refused on every surface alike: a
// steps/* payload against its method's schema; a protocols/MCP or
// protocols/A2A payload, or an A2A hook method's, as the JSON-RPC message
// it is. Of other events, a hook event's tool arguments sent as JSON text
// are held to the strict JSON rules (catalog.CheckArgs).
func CheckPayload(event string, payload map[string]any) error {
	var fe *fieldError
	switch methodKinds[event] {
	case kindStep:
		fe = checkStep(event, payload)
	case kindProtocol:
		fe = checkProtocol(event, payload, "payload")
	case kindA2AHook:
		fe = checkProtocol(MethodA2A, payload, "payload")
	}
	if fe != nil {
		return fmt.Errorf("invalid payload: %s: %s", fe.field, fe.reason)
	}
	return catalog.CheckArgs(event, payload) // hook events' arguments as JSON text
}
