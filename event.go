package warden

import (
	"sort"
	"strings"
	"sync"
)

// Event is one step an agent is about to take, normalized so that every policy
// reads the same variables whatever surface carried it. Handlers never mutate an
// Event; a changed payload travels in a Decision and the chain derives a new Event.
type Event struct {
	Name      string // catalog name, e.g. "steps/toolCallRequest", "protocols/MCP"
	Surface   string // SurfaceAOS, SurfaceMCP, ...
	Direction string // Outbound, Inbound or ""
	RequestID string // the wire id as text, for the trace

	// Payload is the event's params as decoded JSON (for MCP and A2A events, the
	// protocol message itself). Policies' set/patch paths are relative to it.
	Payload map[string]any
	// Raw is Payload as it arrived (JSON), stored in the trace without re-encoding.
	// It may be nil, in which case the trace encodes Payload.
	Raw []byte

	Agent     Agent
	User      User
	SessionID string
	TurnID    string
	StepID    string
	Tool      Tool
	Message   Message
	Reasoning string

	// Normalize, when set, rebuilds the derived views (Tool, Message, ...) of an
	// event whose payload was changed; entry points set it so a later guardian in
	// the chain sees views that agree with the payload it receives.
	Normalize func(ev *Event)

	textOnce sync.Once
	text     string
}

// Agent identifies the agent taking the step.
type Agent struct {
	ID, Name, Version, Provider, Model string
}

// User identifies the human the agent acts for.
type User struct {
	ID, Email, Name, Organization string
}

// Tool is the tool view: the tool being called or whose result is returned.
type Tool struct {
	Name, ID, Server string
	Args             map[string]any // never nil after Normalize
}

// Message is the message view: a prompt, an answer, an A2A message.
type Message struct {
	Role, Text string
}

// contextKey is the top-level payload key holding step metadata (agent, session,
// user); it is exposed through the typed fields, not through Text.
const contextKey = "context"

// Text returns every string in the payload, newline-joined, leaving out the
// step metadata under "context" (it is in Agent, User and the ids). It is
// computed once per event.
func (e *Event) Text() string {
	e.textOnce.Do(func() {
		var b strings.Builder
		for _, k := range sortedKeys(e.Payload) {
			if k != contextKey {
				appendStrings(&b, e.Payload[k])
			}
		}
		e.text = b.String()
	})
	return e.text
}

func appendStrings(b *strings.Builder, v any) {
	switch t := v.(type) {
	case string:
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t)
	case map[string]any:
		for _, k := range sortedKeys(t) {
			appendStrings(b, t[k])
		}
	case []any:
		for _, x := range t {
			appendStrings(b, x)
		}
	}
}

// WithPayload returns a copy of e carrying payload p, its views rebuilt by
// Normalize when the entry point provided one. Raw is dropped: it no longer
// describes the payload.
func (e *Event) WithPayload(p map[string]any) *Event {
	n := &Event{
		Name: e.Name, Surface: e.Surface, Direction: e.Direction, RequestID: e.RequestID,
		Payload: p, Agent: e.Agent, User: e.User, SessionID: e.SessionID, TurnID: e.TurnID,
		StepID: e.StepID, Tool: e.Tool, Message: e.Message, Reasoning: e.Reasoning,
		Normalize: e.Normalize,
	}
	if n.Normalize != nil {
		n.Normalize(n)
	}
	if n.Tool.Args == nil {
		n.Tool.Args = map[string]any{}
	}
	return n
}

// sortedKeys makes Text deterministic: JSON objects decode into maps, whose
// iteration order is random.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ClonePayload deep-copies a decoded JSON payload so a handler can change the
// copy without touching the event (handlers never mutate an Event); nil
// becomes an empty object. Scalars are shared: they are immutable.
func ClonePayload(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	return cloneJSON(p).(map[string]any)
}

func cloneJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = cloneJSON(x)
		}
		return a
	}
	return v
}
