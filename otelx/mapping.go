package otelx

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/wardenhq/warden"
)

// unknown is the value of a required attribute the step does not say
// (the mapping asks for the attribute on every span of its step).
const unknown = "unknown"

// stepSpan is how one step becomes a span: the mapping's span name and
// its step-specific attributes.
type stepSpan struct {
	name  string
	attrs func(ev *warden.Event, p map[string]any) []attribute.KeyValue
}

// steps is ACS trace/otel-mapping.json's step_to_span: span names and
// required (and, when the step says them, optional) attributes, read from
// the events' views first and the ACS payload fields second. Events that
// are not ACS steps (wrapped MCP and A2A messages, AGH hooks) get a span
// named for the event (see spanName).
var steps = map[string]stepSpan{
	"steps/sessionStart": {"acs.session", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("acs.session.id", or(ev.SessionID, unknown))}
	}},
	"steps/agentTrigger": {"acs.agent.trigger", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.agent.id", or(ev.Agent.ID, unknown)),
			attribute.String("acs.trigger.type", or(str(p, "trigger", "type"), str(p, "trigger_type"), str(p, "trigger"), unknown)),
		}
	}},
	"steps/userMessage": {"acs.message.user", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.session.id", or(ev.SessionID, unknown)),
			attribute.StringSlice("acs.content.types", contentTypes(p)),
		}
	}},
	"steps/agentResponse": {"acs.message.agent", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.session.id", or(ev.SessionID, unknown)),
			attribute.String("acs.agent.id", or(ev.Agent.ID, unknown)),
		}
	}},
	"steps/toolCallRequest": {"gen_ai.tool.call", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.String("gen_ai.tool.name", or(ev.Tool.Name, str(p, "tool", "name"), unknown)),
			attribute.String("acs.capability", or(str(p, "capability"), unknown)),
		}
		return optional(kv, "acs.tool.provider", str(p, "tool", "provider"), "acs.tool.version", str(p, "tool", "version"),
			"acs.operation", str(p, "operation"))
	}},
	"steps/toolCallResult": {"gen_ai.tool.result", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.String("gen_ai.tool.name", or(ev.Tool.Name, str(p, "tool", "name"), unknown)),
			attribute.String("acs.exit_status", or(str(p, "exit_status"), unknown)),
		}
		if d, ok := num(p, "duration_ms"); ok {
			kv = append(kv, attribute.Int64("acs.duration_ms", d))
		}
		return optional(kv, "acs.request_id_ref", str(p, "request_id_ref"))
	}},
	"steps/knowledgeRetrieval": {"acs.knowledge.retrieval", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.source.type", or(str(p, "source", "type"), unknown)),
			attribute.Int("acs.results.count", count(p, "results")),
		}
	}},
	"steps/memoryStore": {"acs.memory.store", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.memory_store.name", or(str(p, "memory_store", "name"), unknown)),
			attribute.String("acs.operation", or(str(p, "operation"), unknown)),
		}
	}},
	"steps/memoryContextRetrieval": {"acs.memory.retrieval", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.memory_store.name", or(str(p, "memory_store", "name"), unknown)),
			attribute.Int("acs.results.count", count(p, "results")),
		}
	}},
	"steps/sessionEnd": {"acs.session.end", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("acs.session.reason", or(str(p, "reason"), unknown))}
	}},
	"steps/turnStart": {"acs.turn", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.String("acs.turn.id", or(str(p, "turn_id"), ev.TurnID, unknown)),
			attribute.String("acs.turn.triggered_by", or(str(p, "trigger", "type"), str(p, "triggered_by"), str(p, "trigger"), unknown)),
		}
		return optional(kv, "acs.turn.parent_id", or(str(p, "parent_turn_id"), str(p, "parent_id")))
	}},
	"steps/turnEnd": {"acs.turn.end", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.String("acs.turn.id", or(str(p, "turn_id"), ev.TurnID, unknown)),
			attribute.String("acs.turn.outcome", or(str(p, "outcome"), unknown)),
		}
		if n, ok := num(p, "step_count"); ok {
			kv = append(kv, attribute.Int64("acs.turn.step_count", n))
		}
		return kv
	}},
	"steps/preCompact": {"acs.compact", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.Int("acs.compact.entry_count", count(p, "entries_to_compact")),
			attribute.String("acs.compact.triggered_by", or(str(p, "triggered_by"), unknown)),
		}
		if n, ok := num(p, "estimated_input_tokens"); ok {
			kv = append(kv, attribute.Int64("acs.compact.estimated_input_tokens", n))
		}
		return kv
	}},
	"steps/postCompact": {"acs.compact.complete", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		n := count(p, "entries_compacted")
		if n == 0 {
			n = count(p, "compacted_entries")
		}
		kv := []attribute.KeyValue{attribute.Int("acs.compact.entry_count", n)}
		if d, ok := num(p, "lineage_depth_after"); ok {
			kv = append(kv, attribute.Int64("acs.compact.lineage_depth_after", d))
		}
		return kv
	}},
	"steps/subagentStart": {"acs.subagent", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.subagent.session_id", or(str(p, "subagent", "session_id"), str(p, "subagent_session_id"), unknown)),
			attribute.String("acs.subagent.parent_session_id", or(str(p, "subagent", "parent_session_id"), ev.SessionID, unknown)),
			attribute.String("acs.subagent.intent_derivation", or(str(p, "subagent", "intent_derivation"), str(p, "intent_derivation"), unknown)),
		}
	}},
	"steps/subagentStop": {"acs.subagent.end", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.subagent.session_id", or(str(p, "subagent_session_id"), str(p, "subagent", "session_id"), unknown)),
			attribute.String("acs.subagent.outcome", or(str(p, "outcome"), str(p, "result", "outcome"), unknown)),
			attribute.String("acs.subagent.final_chain_hash", or(str(p, "final_chain_hash"), unknown)),
		}
	}},
	"steps/skillRegister": {"acs.skill.register", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return append(skillDigest(p), attribute.StringSlice("acs.skill.declared_capabilities", strs(p, "skill", "declared_capabilities")))
	}},
	"steps/skillLoad": {"acs.skill.load", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := append(skillDigest(p),
			attribute.String("acs.skill.load_trigger", or(str(p, "load_trigger"), str(p, "skill", "load_trigger"), unknown)),
			attribute.StringSlice("acs.skill.load_path", or2(strs(p, "load_path"), strs(p, "skill", "load_path"))))
		return optional(kv, "acs.skill.registration_ref", or(str(p, "registration_ref"), str(p, "skill", "registration_ref")))
	}},
	"steps/skillUnload": {"acs.skill.unload", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		kv := []attribute.KeyValue{
			attribute.String("acs.skill.id", or(str(p, "skill", "id"), str(p, "skill_id"), unknown)),
			attribute.String("acs.skill.reason", or(str(p, "reason"), unknown)),
		}
		return optional(kv, "acs.skill.replaced_by", str(p, "replaced_by"))
	}},
	"agbom/snapshot": {"acs.agbom", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.agbom.format", or(str(p, "format"), str(p, "agbom", "format"), "canonical")),
			attribute.Int("acs.agbom.component_count", max(count(p, "components"), countIn(p, "agbom", "components"))),
		}
	}},
	"agbom/changed": {"acs.agbom", func(ev *warden.Event, p map[string]any) []attribute.KeyValue {
		return []attribute.KeyValue{
			attribute.String("acs.agbom.format", or(str(p, "format"), str(p, "agbom", "format"), "canonical")),
			attribute.String("acs.agbom.change_reason", or(str(p, "change_reason"), str(p, "reason"), unknown)),
		}
	}},
}

// spanName returns the span name of an event: the mapping's for ACS steps,
// gen_ai.tool.call for a tool call on any surface, else the event's name.
func spanName(ev *warden.Event) string {
	if s, ok := steps[ev.Name]; ok {
		return s.name
	}
	if ev.Tool.Name != "" && ev.Direction != warden.Inbound {
		return "gen_ai.tool.call"
	}
	return ev.Name
}

func skillDigest(p map[string]any) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("acs.skill.id", or(str(p, "skill", "id"), str(p, "skill_id"), unknown)),
		attribute.String("acs.skill.digest.algorithm", or(str(p, "skill", "digest", "algorithm"), str(p, "digest", "algorithm"), unknown)),
		attribute.String("acs.skill.digest.value", or(str(p, "skill", "digest", "value"), str(p, "digest", "value"), unknown)),
	}
}

// contentTypes lists the distinct types of an ACS content array.
func contentTypes(p map[string]any) []string {
	items, _ := p["content"].([]any)
	var out []string
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if t, ok := m["type"].(string); ok && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if len(out) == 0 {
		return []string{"text"}
	}
	return out
}

// optional appends each (key, value) pair whose value is not "".
func optional(kv []attribute.KeyValue, pairs ...string) []attribute.KeyValue {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			kv = append(kv, attribute.String(pairs[i], pairs[i+1]))
		}
	}
	return kv
}

// or returns the first of vs that is not "".
func or(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func or2(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// walk returns the value at path in p (nil when absent).
func walk(p map[string]any, path ...string) any {
	var v any = p
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(p map[string]any, path ...string) string {
	s, _ := walk(p, path...).(string)
	return s
}

// strs returns the strings of the array at path.
func strs(p map[string]any, path ...string) []string {
	a, _ := walk(p, path...).([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			if s := or(str(t, "id"), str(t, "name")); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// num returns the whole number at path.
func num(p map[string]any, path ...string) (int64, bool) {
	switch t := walk(p, path...).(type) {
	case float64:
		return int64(t), true
	case int:
		return int64(t), true
	case int64:
		return t, true
	}
	return 0, false
}

// count returns the length of the array at key (or the number there).
func count(p map[string]any, key string) int { return countIn(p, key) }

func countIn(p map[string]any, path ...string) int {
	switch t := walk(p, path...).(type) {
	case []any:
		return len(t)
	case float64:
		return int(t)
	}
	return 0
}
