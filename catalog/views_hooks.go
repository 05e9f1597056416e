package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/jsonstrict"
)

// aghViews reads an AGH hook payload (seed 003):
//
//   - every event: SessionID = session_id, TurnID = turn_id,
//     Agent.Name = agent_name.
//   - tool.*: Tool{Name: tool_name, ID: tool_call_id,
//     Server: tool_namespace, Args: tool_input}.
//   - permission.*: Tool from tool_name/tool_call (name, else kind),
//     tool_call.id and tool_input.
//   - input.pre_submit: Message{Role: "user", Text: message};
//     prompt.post_assemble: Message{Role: input_class or "user", Text: prompt};
//     message.*: Message{Role: role, Text: text}.
func aghViews(ev *warden.Event, p map[string]any) {
	e := byName[ev.Name]
	ev.SessionID, ev.TurnID = str(p, "session_id"), str(p, "turn_id")
	ev.Agent.Name = str(p, "agent_name")
	switch e.Family {
	case "tool":
		ev.Tool = warden.Tool{Name: str(p, "tool_name"), ID: str(p, "tool_call_id"),
			Server: str(p, "tool_namespace"), Args: args(p["tool_input"])}
	case "permission":
		tc := obj(p, "tool_call")
		name := firstOf(str(p, "tool_name"), str(tc, "name"), str(tc, "kind"))
		ev.Tool = warden.Tool{Name: name, ID: firstOf(str(p, "tool_call_id"), str(tc, "id")),
			Server: str(p, "tool_namespace"), Args: args(p["tool_input"])}
	case "input":
		ev.Message = warden.Message{Role: "user", Text: text(p["message"])}
	case "prompt":
		ev.Message = warden.Message{Role: firstOf(str(p, "input_class"), "user"), Text: text(p["prompt"])}
	case "message":
		ev.Message = warden.Message{Role: str(p, "role"), Text: text(p["text"])}
	}
}

// standardViews reads a Standard Agents hook payload (seed 002):
//
//   - every hook: SessionID = thread_id, Agent.ID = agent_id, User.ID = user_id.
//   - tool hooks: Tool{Name: tool_call.function.name, ID: tool_call.id,
//     Args: tool_call.function.arguments parsed as JSON} (malformed
//     arguments give empty Args).
//   - message hooks: Message{Role, Text} from message.role and
//     message.content (a string, or a list of parts whose text is joined);
//     filter_messages and prefilter_llm_history use the last message.
func standardViews(ev *warden.Event, p map[string]any) {
	e := byName[ev.Name]
	ev.SessionID = firstOf(str(p, "thread_id"), str(p, "threadId"))
	ev.Agent.ID = firstOf(str(p, "agent_id"), str(p, "agentId"))
	ev.User.ID = firstOf(str(p, "user_id"), str(p, "userId"))
	switch e.Family {
	case FamilyToolExecution:
		tc := obj(p, "tool_call")
		fn := obj(tc, "function")
		ev.Tool = warden.Tool{Name: str(fn, "name"), ID: str(tc, "id"), Args: args(fn["arguments"])}
	case FamilyMessageLifecycle:
		ev.Message = messageView(obj(p, "message"))
	case FamilyMessageFiltering:
		if list, ok := p["messages"].([]any); ok && len(list) > 0 {
			m, _ := list[len(list)-1].(map[string]any)
			ev.Message = messageView(m)
		}
	}
}

// messageView reads a HookMessage or LLMMessage: role and content, where
// content is a string or a list of parts ({"type":"text","text":...}).
func messageView(m map[string]any) warden.Message {
	return warden.Message{Role: str(m, "role"), Text: text(m["content"])}
}

// args turns tool arguments into a map: an object as is, a JSON string holding
// an object parsed; anything else (malformed JSON, an array, a scalar) is an
// empty map.
func args(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return t
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) == nil && m != nil {
			return m
		}
	}
	return map[string]any{}
}

// CheckArgs refuses a hook payload whose tool arguments arrive as JSON text
// (an AGH tool_input string, a Standard Agents tool_call.function.arguments)
// that readers would read differently: a duplicate key, keys that differ
// only in case, invalid UTF-8 or a lone surrogate (jsonstrict's rules, the
// ones the payload's own JSON is held to). The view keeps one value of a
// duplicated name, while the tool may use the other. Text that is not JSON
// at all is left to the view (empty arguments). nil for other events.
func CheckArgs(event string, p map[string]any) error {
	var v any
	var field string
	switch viewKinds[event] {
	case viewAGH:
		if f := byName[event].Family; f == "tool" || f == "permission" {
			v, field = p["tool_input"], "payload.tool_input"
		}
	case viewStandard:
		if byName[event].Family == FamilyToolExecution {
			v, field = obj(obj(p, "tool_call"), "function")["arguments"], "payload.tool_call.function.arguments"
		}
	}
	s, ok := v.(string)
	if !ok {
		return nil
	}
	var amb *jsonstrict.Error
	if err := jsonstrict.Check([]byte(s)); errors.As(err, &amb) {
		where := field
		if amb.Path != "" {
			where += " (" + amb.Path + ")"
		}
		return fmt.Errorf("invalid payload: %s: JSON text with %s", where, amb.Msg)
	}
	return nil
}

// text returns the text of a message value: a string; the "text" (or
// "content") of an object; the texts of a list of parts, newline-joined.
func text(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		if s, ok := t["text"].(string); ok {
			return s
		}
		if c, ok := t["content"]; ok {
			return text(c)
		}
	case []any:
		var parts []string
		for _, x := range t {
			if s := text(x); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// str reads a string member; numbers (ids are sometimes numeric) are
// formatted, anything else is "".
func str(m map[string]any, k string) string {
	switch t := m[k].(type) {
	case string:
		return t
	case float64, int, int64, json.Number:
		return fmt.Sprint(t)
	}
	return ""
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func arr(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

// byName indexes the catalog by name (the first entry of a name: both
// directions of a protocol event share family and source).
var byName = func() map[string]Event {
	m := make(map[string]Event, len(all))
	for _, e := range all {
		if _, ok := m[e.Name]; !ok {
			m[e.Name] = e
		}
	}
	return m
}()
