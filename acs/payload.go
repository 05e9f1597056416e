package acs

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/catalog"
)

// kind is the JSON type a payload rule wants.
type kind uint8

const (
	kAny kind = iota
	kString
	kObject
	kArray
	kInteger
	kHash // a string of 64 lowercase hex digits
)

var kindNames = [...]string{"a value", "a string", "an object", "an array", "an integer", "64 lowercase hex digits"}

// rule is one constraint of a hook payload, after its schema
// (specification/v0.1.0/hooks/*.json) with ACS-Core's relaxation:
// provenance is optional (conformance.md, ACS-Core). A path is dotted;
// "[]" steps into every element of an array: "content[].type".
type rule struct {
	path     string
	k        kind
	required bool
	enum     []string
	minItems int
}

func req(path string, k kind) rule { return rule{path: path, k: k, required: true} }
func opt(path string, k kind) rule { return rule{path: path, k: k} }
func reqEnum(path string, e ...string) rule {
	return rule{path: path, k: kString, required: true, enum: e}
}
func optEnum(path string, e ...string) rule { return rule{path: path, k: kString, enum: e} }
func nonEmpty(path string, k kind, min int) rule {
	return rule{path: path, k: k, required: true, minItems: min}
}
func content(path string) []rule { return contentRules(path, true) }
func contentRules(path string, need bool) []rule {
	return []rule{
		{path: path, k: kArray, required: need, minItems: 1},
		reqEnum(path+"[].type", "text", "image", "audio", "file"),
		req(path+"[].value", kAny),
	}
}

// payloadRules are the payload constraints of each method. A method with
// no schema in ACS v0.1.0 as published (sessionStart, agentTrigger, …)
// keeps the fields its hooks.md entry makes essential, if any.
var payloadRules = map[string][]rule{
	MethodPing: {opt("echo", kString)},
	MethodHello: {
		nonEmpty("acs_versions_supported", kArray, 1), req("acs_versions_supported[]", kString),
		req("methods_implemented", kArray), req("methods_implemented[]", kString),
		nonEmpty("transports_supported", kArray, 1), req("transports_supported[]", kString),
		reqEnum("transports_supported[]", "http", "https", "stdio"),
		reqEnum("provenance_producer", "deterministic", "none"),
		opt("max_payload_size_bytes", kInteger),
		opt("wrapped_protocols", kArray), reqEnum("wrapped_protocols[].protocol", "MCP", "A2A"), req("wrapped_protocols[].version", kString),
		opt("profiles_supported", kArray), req("profiles_supported[]", kString),
	},
	catalog.MethodUserMessage:   content("content"),
	catalog.MethodAgentResponse: append(content("content"), opt("reasoning", kString)),
	catalog.MethodKnowledgeRetrieval: {
		req("query", kObject), req("query.value", kString), req("results", kArray), req("results[].value", kAny),
	},
	catalog.MethodMemoryContextRetrieval: {req("results", kArray), req("results[].value", kAny), opt("query", kObject)},
	catalog.MethodMemoryStore: {
		req("content", kObject), req("content.value", kAny),
		optEnum("operation", "create", "update", "delete"),
	},
	catalog.MethodToolCallRequest: {
		req("tool", kObject), req("tool.name", kString), req("arguments", kObject), req("arguments.*", kObject),
		req("arguments.*.value", kAny), opt("intent", kObject), opt("raw_command", kString),
	},
	catalog.MethodToolCallResult: {
		req("tool", kObject), req("tool.name", kString),
		reqEnum("exit_status", "success", "failure", "timeout", "blocked"),
		req("outputs", kArray), req("outputs[].value", kAny), opt("request_id_ref", kString), opt("duration_ms", kInteger),
	},
	catalog.MethodPreCompact: {
		nonEmpty("entries_to_compact", kArray, 1), req("entries_to_compact[]", kString),
		reqEnum("triggered_by", "size_threshold", "manual", "agent_initiated", "framework_initiated"),
	},
	// post_compact_chain_hash is required by the draft schema but no sender
	// can know it (the entry that carries it commits to it): optional, as
	// the reference Guardian has it; the answer's chain_hash publishes it.
	catalog.MethodPostCompact: {
		req("summary", kObject), req("summary.value", kString),
		nonEmpty("entries_compacted", kArray, 1), req("pre_compact_chain_hash", kHash), opt("post_compact_chain_hash", kHash),
	},
	catalog.MethodSubagentStart: {req("subagent_session_id", kString)},
	catalog.MethodSubagentStop: {
		req("subagent_session_id", kString),
		reqEnum("outcome", "completed", "failed", "cancelled", "timeout", "denied_at_spawn"),
		opt("final_chain_hash", kHash), opt("summary", kObject),
	},
	catalog.MethodSkillRegister: {req("skill_id", kString), opt("definition", kObject)},
	catalog.MethodSkillLoad:     {req("skill_id", kString), opt("digest", kObject)},
	catalog.MethodSkillUnload:   {req("skill_id", kString)},
	catalog.MethodTurnEnd: {
		req("turn_id", kString), reqEnum("outcome", "completed", "deferred", "error", "interrupted", "denied_at_start"),
	},
}

// checkPayload validates the payload of event; the error names the field
// (params.payload.tool.name) and is -32602.
func checkPayload(event string, p map[string]any) *Error {
	if strings.HasPrefix(event, catalog.ACSMCPPrefix) {
		return checkWrappedMCP(event, p)
	}
	for _, r := range payloadRules[event] {
		if e := r.check(p); e != nil {
			return e
		}
	}
	return checkProvenance(event, p, false)
}

// checkWrappedMCP: the payload is the MCP JSON-RPC 2.0 message, a request
// or notification of the wrapped method, or the response the agent
// received (extend_mcp.md).
func checkWrappedMCP(event string, p map[string]any) *Error {
	if v, _ := p["jsonrpc"].(string); v != "2.0" {
		return errf(CodeInvalidParams, "params.payload.jsonrpc", `must be "2.0": the payload is the wrapped MCP message`)
	}
	want := strings.TrimPrefix(event, catalog.ACSMCPPrefix)
	if m, has := p["method"]; has {
		if s, _ := m.(string); s != want {
			return errf(CodeInvalidParams, "params.payload.method", "%q does not match the wrapped method %q", clip(s), want)
		}
		if pr, has := p["params"]; has {
			if _, ok := pr.(map[string]any); !ok {
				return errf(CodeInvalidParams, "params.payload.params", "must be an object")
			}
		}
		return nil
	}
	_, res := p["result"]
	_, er := p["error"]
	if res == er {
		return errf(CodeInvalidParams, "params.payload", "a wrapped MCP message has a method (request) or one of result and error (response)")
	}
	if _, has := p["id"]; !has {
		return errf(CodeInvalidParams, "params.payload.id", "a wrapped MCP response needs the id of its request")
	}
	return nil
}

// check applies r to the payload p.
func (r rule) check(p map[string]any) *Error {
	return walkRule(r, p, strings.Split(r.path, "."), "params.payload")
}

func walkRule(r rule, v any, parts []string, at string) *Error {
	if len(parts) == 0 {
		return r.value(v, at)
	}
	key := parts[0]
	arr := strings.HasSuffix(key, "[]")
	key = strings.TrimSuffix(key, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return nil // the parent's own rule reports its type
	}
	if key == "*" {
		for k, x := range m {
			if e := walkRule(r, x, parts[1:], at+"."+k); e != nil {
				return e
			}
		}
		return nil
	}
	x, has := m[key]
	where := at + "." + key
	if !has {
		if r.required && len(parts) == 1 && !arr {
			return errf(CodeInvalidParams, where, "required, %s", kindNames[r.k])
		}
		return nil
	}
	if !arr {
		return walkRule(r, x, parts[1:], where)
	}
	items, ok := x.([]any)
	if !ok {
		return nil
	}
	for i, it := range items {
		rest := parts[1:]
		w := where + "[" + strconv.Itoa(i) + "]"
		if len(rest) == 0 {
			if e := r.value(it, w); e != nil {
				return e
			}
			continue
		}
		if _, ok := it.(map[string]any); !ok {
			return errf(CodeInvalidParams, w, "must be an object")
		}
		if e := walkRule(r, it, rest, w); e != nil {
			return e
		}
	}
	return nil
}

// value checks one value's kind, enum and size.
func (r rule) value(v any, at string) *Error {
	bad := func() *Error { return errf(CodeInvalidParams, at, "must be %s", kindNames[r.k]) }
	switch r.k {
	case kString, kHash:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if r.k == kHash && !hexHashRE.MatchString(s) {
			return bad()
		}
		if len(r.enum) > 0 && !slices.Contains(r.enum, s) {
			return errf(CodeInvalidParams, at, "%q is not one of %s", clip(s), strings.Join(r.enum, ", "))
		}
	case kObject:
		if _, ok := v.(map[string]any); !ok {
			return bad()
		}
	case kArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		if len(a) < r.minItems {
			return errf(CodeInvalidParams, at, "needs at least %d item(s)", r.minItems)
		}
	case kInteger:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := n.Int64(); err != nil {
			return bad()
		}
	}
	return nil
}
