package hostadapter

import (
	"encoding/json"
	"fmt"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonstrict"
)

// The ACS payloads the hosts' events map to (shared/acs schemas, with
// ACS-Core's relaxation: provenance is optional and none is invented).

// toolRequest is a steps/toolCallRequest payload: each argument wrapped
// as {value}.
func toolRequest(tool string, input map[string]any) map[string]any {
	args := make(map[string]any, len(input))
	for k, v := range input {
		args[k] = map[string]any{"value": v}
	}
	return map[string]any{"tool": map[string]any{"name": tool}, "arguments": args}
}

// toolResult is a steps/toolCallResult payload.
func toolResult(tool string, output any, status string) map[string]any {
	if output == nil {
		output = ""
	}
	return map[string]any{
		"tool": map[string]any{"name": tool}, "exit_status": status,
		"outputs": []any{map[string]any{"value": output}},
	}
}

// textContent is an ACS content array of one text item.
func textContent(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "value": s}}}
}

// jsonOrString parses a JSON-stringified value (Cursor sends tool inputs
// and outputs so), keeping the string when it is not JSON, or is JSON that
// readers would read differently (jsonstrict: a duplicate key's both
// values stay visible in the text).
func jsonOrString(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil || jsonstrict.Check([]byte(s)) != nil {
		return s
	}
	return v
}

// base fills the fields every host payload shares: the session id (the
// first of keys present), cwd and the platform.
func base(host, event string, in map[string]any, keys ...string) (*Step, error) {
	st := &Step{Host: host, Event: event, Metadata: map[string]any{"platform": host}}
	for _, k := range keys {
		s, err := optString(in, k)
		if err != nil {
			return nil, err
		}
		if s != "" {
			st.SessionID = s
			break
		}
	}
	if st.SessionID == "" {
		return nil, fmt.Errorf("%s: required, the host's session id", keys[0])
	}
	cwd, err := optString(in, "cwd")
	if err != nil {
		return nil, err
	}
	if cwd != "" {
		st.Metadata["cwd"] = cwd
	}
	return st, nil
}

// preTool maps a tool call about to run (tool_name, tool_input object).
func preTool(st *Step, in map[string]any) error {
	name, err := reqString(in, "tool_name")
	if err != nil {
		return err
	}
	input, err := reqObject(in, "tool_input")
	if err != nil {
		return err
	}
	st.Kind, st.Method, st.Tool, st.Input = Gate, catalog.MethodToolCallRequest, name, input
	st.Payload = toolRequest(name, input)
	return nil
}

// postTool maps a tool call that ran (tool_name, and the output under
// one of outKeys).
func postTool(st *Step, in map[string]any, kind Kind, status string, outKeys ...string) error {
	name, err := reqString(in, "tool_name")
	if err != nil {
		return err
	}
	var out any
	for _, k := range outKeys {
		if v, ok := in[k]; ok {
			out = v
			break
		}
	}
	st.Kind, st.Method, st.Tool = kind, catalog.MethodToolCallResult, name
	st.Payload = toolResult(name, out, status)
	return nil
}

// prompt maps a user prompt about to reach the model.
func prompt(st *Step, in map[string]any, key string) error {
	p, err := optString(in, key)
	if err != nil {
		return err
	}
	st.Kind, st.Method, st.Payload = Gate, catalog.MethodUserMessage, textContent(p)
	return nil
}

// observe maps a lifecycle event the host does not let warden block.
func observe(st *Step, method string, payload map[string]any) {
	st.Kind, st.Method, st.Payload = Observe, method, payload
}

// methodsOf lists the ACS methods a host's adapter can emit (its
// ClientHello methods_implemented).
var adapterMethods = []string{
	catalog.MethodSessionStart, catalog.MethodUserMessage, catalog.MethodAgentResponse,
	catalog.MethodToolCallRequest, catalog.MethodToolCallResult, catalog.MethodSubagentStart,
	catalog.MethodTurnEnd,
}

// sessionEndNote: no host's session end is forwarded as steps/sessionEnd.
// That step seals the ACS session for good — warden refuses every later
// step of it — while each of these hosts resumes a session under the same
// id (claude --resume, codex resume, gemini --resume, a reopened Cursor
// chat), whose steps would then all be denied.
