package warden

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/jsonappend"
)

// Event is one step an agent is about to take, normalized so that every policy
// reads the same variables whatever surface carried it. A surface fills the
// wire fields (Name, Surface, Direction, RequestID), the Payload and what it
// knows beside it (Envelope); the Decider builds the views (Agent, User,
// Tool, Message, ...) from those with its one ViewBuilder, so no surface can
// show policies a view of its own. Handlers never mutate an Event; a changed
// payload travels in a Decision and the chain derives a new Event whose views
// are rebuilt the same way.
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
	// Envelope is what the surface knows about the step beside the payload.
	Envelope Envelope
	// Principal is who asked, as authentication established it. The
	// Decider sets it from the request context (WithPrincipal) when that
	// carries one; records of the event, async hooks' included, keep it.
	Principal Principal

	// The views, built by the Decider's ViewBuilder from Payload and
	// Envelope (docs/policies.md). Whatever a surface puts here is replaced.
	Agent     Agent
	User      User
	SessionID string
	TurnID    string
	StepID    string
	Tool      Tool
	Message   Message
	Reasoning string
	// Provenance lists the ACS Provenance objects of the payload's
	// data-bearing fields (a view, built like the others; empty outside
	// ACS payloads).
	Provenance []Provenance

	// SessionLabels are the labels the session (Principal.Tenant,
	// SessionID) held when the step was decided, sorted; policies read
	// them as session.labels. The Decider sets them after the views; the
	// slice is shared and must not be changed.
	SessionLabels []string
	// LabelsUnread says the Decider did not read the session's labels
	// because no step of the event's chain (nor the shadow set) can look
	// at them (see SessionLabelUser): SessionLabels is empty without
	// saying the session has none. The record's views keep the mark, so
	// that a replay knows it cannot tell what session.labels held.
	LabelsUnread bool

	// ToolChanges is the mcp view: the changes of an MCP tools/list answer
	// against the server's pins (Envelope.ToolChanges), policies'
	// mcp.tool_changes; empty for every other event.
	ToolChanges []ToolChange

	views    ViewBuilder
	textOnce sync.Once
	text     string
}

// Envelope is what a surface knows about a step that its payload does not
// say: the AOS step context of a wrapped protocol message, the session a
// gateway tracks, the upstream a message goes to, the tool of the request
// a response answers.
type Envelope struct {
	// Context is the step context (an AOS StepContext, or the from/to sides
	// of an A2A exchange) when the payload does not carry it; a steps/*
	// payload carries its own under "context".
	Context map[string]any
	// Reasoning is the wrapper's reasoning of a wrapped protocol message.
	Reasoning string
	// SessionID is the session the surface tracks (an A2A context id, an
	// MCP session), used when the context names none.
	SessionID string
	// Server names the upstream the message goes to or comes from (the MCP
	// server, the A2A agent).
	Server string
	// Answers is the tool view of the request a response answers (from the
	// surface's correlation cache); nil when unknown or not a tool call.
	Answers *Tool
	// ToolChanges are the differences between the tools a tools/list
	// answer lists and the server's pinned tools (the MCP gateway sets
	// them; the view ToolChanges, policies' mcp.tool_changes).
	ToolChanges []ToolChange
	// Approved are the asks an approver approved for the request a
	// response answers (the surface keeps them with the request, see
	// Cover); nil when none. The policies that asked do not ask again for
	// the answer, unless their condition reads direction.
	Approved []Cover
}

// ViewBuilder fills the views of ev from its Name, Surface, Direction,
// Payload and Envelope, replacing whatever they held. There is one in
// production (catalog.Views); the Decider runs it for every event.
type ViewBuilder func(ev *Event)

// BuildViews runs b on ev and remembers it, so events derived by
// WithPayload get their views rebuilt the same way. A nil b only makes
// Tool.Args non-nil.
func (e *Event) BuildViews(b ViewBuilder) {
	e.views = b
	if b != nil {
		b(e)
	}
	if e.Tool.Args == nil {
		e.Tool.Args = map[string]any{}
	}
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
// the ViewBuilder e's were built with. Raw is dropped: it no longer describes
// the payload.
func (e *Event) WithPayload(p map[string]any) *Event {
	n := &Event{
		Name: e.Name, Surface: e.Surface, Direction: e.Direction, RequestID: e.RequestID,
		Payload: p, Envelope: e.Envelope, Principal: e.Principal, Agent: e.Agent, User: e.User, SessionID: e.SessionID,
		TurnID: e.TurnID, StepID: e.StepID, Tool: e.Tool, Message: e.Message, Reasoning: e.Reasoning,
		Provenance: e.Provenance, SessionLabels: e.SessionLabels, LabelsUnread: e.LabelsUnread, ToolChanges: e.ToolChanges,
	}
	n.BuildViews(e.views)
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

// ViewsJSON returns the event's views as a JSON object named as policies
// name them (agent, user, session, turn, step, tool, message, reasoning,
// and provenance, session.labels and mcp when not empty), for the trace: a
// replay can see what the policies saw. nil if they do not encode (tool
// arguments are decoded JSON, so they always do). See AppendViewsJSON.
func (e *Event) ViewsJSON() json.RawMessage {
	return jsonappend.Pooled(e.AppendViewsJSON)
}

// AppendViewsJSON appends the views ViewsJSON returns to dst: byte for byte
// what encoding/json writes for them (recordjson.go), members in this
// order: agent {id, name, version, provider, model}, user {id, email, name,
// organization}, session {id, labels (when any), labels_unread (when
// true)}, turn, step, tool {name, id, server, args (an object, {} when
// nil)}, message {role, text}, reasoning, provenance (when any) and mcp
// {tool_changes} (when any), approved (when any: see Cover). An error (a NaN or a value encoding/json
// refuses in the tool arguments) leaves a partial object in dst.
func (e *Event) AppendViewsJSON(dst []byte) ([]byte, error) {
	dst = jsonappend.String(append(dst, `{"agent":{"id":`...), e.Agent.ID)
	dst = jsonappend.String(append(dst, `,"name":`...), e.Agent.Name)
	dst = jsonappend.String(append(dst, `,"version":`...), e.Agent.Version)
	dst = jsonappend.String(append(dst, `,"provider":`...), e.Agent.Provider)
	dst = jsonappend.String(append(dst, `,"model":`...), e.Agent.Model)
	dst = jsonappend.String(append(dst, `},"user":{"id":`...), e.User.ID)
	dst = jsonappend.String(append(dst, `,"email":`...), e.User.Email)
	dst = jsonappend.String(append(dst, `,"name":`...), e.User.Name)
	dst = jsonappend.String(append(dst, `,"organization":`...), e.User.Organization)
	dst = jsonappend.String(append(dst, `},"session":{"id":`...), e.SessionID)
	if len(e.SessionLabels) > 0 {
		dst = jsonappend.Strings(append(dst, `,"labels":`...), e.SessionLabels)
	}
	if e.LabelsUnread {
		dst = append(dst, `,"labels_unread":true`...)
	}
	dst = jsonappend.String(append(dst, `},"turn":`...), e.TurnID)
	dst = jsonappend.String(append(dst, `,"step":`...), e.StepID)
	dst = jsonappend.String(append(dst, `,"tool":{"name":`...), e.Tool.Name)
	dst = jsonappend.String(append(dst, `,"id":`...), e.Tool.ID)
	dst = jsonappend.String(append(dst, `,"server":`...), e.Tool.Server)
	dst = append(dst, `,"args":`...)
	if e.Tool.Args == nil {
		dst = append(dst, '{', '}')
	} else {
		var err error
		if dst, err = jsonappend.Object(dst, e.Tool.Args, 0); err != nil {
			return dst, err
		}
	}
	dst = jsonappend.String(append(dst, `},"message":{"role":`...), e.Message.Role)
	dst = jsonappend.String(append(dst, `,"text":`...), e.Message.Text)
	dst = jsonappend.String(append(dst, `},"reasoning":`...), e.Reasoning)
	// Provenance and mcp are left out when empty: records of events
	// without them keep the shape they had before.
	for i, p := range e.Provenance {
		if i == 0 {
			dst = append(dst, `,"provenance":[`...)
		} else {
			dst = append(dst, ',')
		}
		dst = jsonappend.String(append(dst, `{"field":`...), p.Field)
		dst = jsonappend.String(append(dst, `,"provenance_id":`...), p.ID)
		dst = jsonappend.String(append(dst, `,"origin":`...), p.Origin)
		if p.SourceID != "" {
			dst = jsonappend.String(append(dst, `,"source_id":`...), p.SourceID)
		}
		if len(p.DerivedFrom) > 0 {
			dst = jsonappend.Strings(append(dst, `,"derived_from":`...), p.DerivedFrom)
		}
		dst = append(dst, '}')
	}
	if len(e.Provenance) > 0 {
		dst = append(dst, ']')
	}
	if len(e.ToolChanges) > 0 {
		// Rare (an MCP tools/list answer that changed a pin): encoding/json
		// writes the changes.
		var err error
		if dst, err = jsonappend.Marshaled(append(dst, `,"mcp":{"tool_changes":`...), e.ToolChanges); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	// The asks an approval of the request covered (Cover), when any: a
	// replay sees what the policies saw.
	for i, c := range e.Envelope.Approved {
		if i == 0 {
			dst = append(dst, `,"approved":[`...)
		} else {
			dst = append(dst, ',')
		}
		dst = jsonappend.String(append(dst, `{"guardian":`...), c.Guardian)
		dst = jsonappend.String(append(dst, `,"policy_id":`...), c.PolicyID)
		dst = append(dst, '}')
	}
	if len(e.Envelope.Approved) > 0 {
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}
