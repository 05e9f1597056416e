package replay

import (
	"bytes"
	"fmt"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// views is a record's views (Record.Views) as warden.Event.ViewsJSON
// writes them, named as policies name them (docs/policies.md).
type views struct {
	Agent struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
	} `json:"agent"`
	User struct {
		ID           string `json:"id"`
		Email        string `json:"email"`
		Name         string `json:"name"`
		Organization string `json:"organization"`
	} `json:"user"`
	Session struct {
		ID           string   `json:"id"`
		Labels       []string `json:"labels"`
		LabelsUnread bool     `json:"labels_unread"`
	} `json:"session"`
	Turn string `json:"turn"`
	Step string `json:"step"`
	Tool struct {
		Name   string         `json:"name"`
		ID     string         `json:"id"`
		Server string         `json:"server"`
		Args   map[string]any `json:"args"`
	} `json:"tool"`
	Message struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"message"`
	Reasoning  string `json:"reasoning"`
	Provenance []struct {
		Field       string   `json:"field"`
		ID          string   `json:"provenance_id"`
		Origin      string   `json:"origin"`
		SourceID    string   `json:"source_id"`
		DerivedFrom []string `json:"derived_from"`
	} `json:"provenance"`
	MCP struct {
		ToolChanges []warden.ToolChange `json:"tool_changes"`
	} `json:"mcp"`
	Approved []warden.Cover `json:"approved"`
}

// set puts the recorded views into ev's view fields.
func (v *views) set(ev *warden.Event) {
	ev.Agent = warden.Agent(v.Agent)
	ev.User = warden.User(v.User)
	ev.SessionID, ev.TurnID, ev.StepID = v.Session.ID, v.Turn, v.Step
	ev.Tool = warden.Tool{Name: v.Tool.Name, ID: v.Tool.ID, Server: v.Tool.Server, Args: v.Tool.Args}
	ev.Message = warden.Message(v.Message)
	ev.Reasoning = v.Reasoning
	// The session's labels when the step was decided (the record keeps
	// them; the store's labels have moved on since), and the provenance.
	// A record whose labels were not read (no policy of then looked at
	// them) says so: a policy of now that would read them fails the step
	// (labels.ErrUnread) rather than see none.
	ev.SessionLabels, ev.LabelsUnread = v.Session.Labels, v.Session.LabelsUnread
	ev.Provenance = nil
	for _, p := range v.Provenance {
		ev.Provenance = append(ev.Provenance, warden.Provenance(p))
	}
	// A tools/list answer's changes against the pins of then.
	ev.ToolChanges = v.MCP.ToolChanges
	// The asks the approval of the request this answers covered.
	ev.Envelope.Approved = v.Approved
}

// fill gives every view catalog.Views left empty on ev the recorded value:
// those came from what the surface knew beside the payload (the envelope),
// which the record does not keep.
func (v *views) fill(ev *warden.Event) {
	if ev.Agent == (warden.Agent{}) {
		ev.Agent = warden.Agent(v.Agent)
	}
	if ev.User == (warden.User{}) {
		ev.User = warden.User(v.User)
	}
	if ev.SessionID == "" {
		ev.SessionID = v.Session.ID
	}
	if ev.TurnID == "" {
		ev.TurnID = v.Turn
	}
	if ev.StepID == "" {
		ev.StepID = v.Step
	}
	if ev.Tool.Name == "" && ev.Tool.ID == "" && ev.Tool.Server == "" {
		ev.Tool = warden.Tool{Name: v.Tool.Name, ID: v.Tool.ID, Server: v.Tool.Server, Args: v.Tool.Args}
	}
	if ev.Message == (warden.Message{}) {
		ev.Message = warden.Message(v.Message)
	}
	if ev.Reasoning == "" {
		ev.Reasoning = v.Reasoning
	}
	if len(ev.ToolChanges) == 0 {
		ev.ToolChanges = v.MCP.ToolChanges
	}
}

// Event rebuilds the event rec was decided on, as the policies saw it: its
// name, surface, direction and caller from the record, its payload decoded
// from the recorded input (redacted where the trace redacted it), and its
// views exactly as recorded.
//
// The views are not rebuilt from the input through catalog.Views: that
// gives the same views only where the payload alone carries them. A
// wrapped MCP or A2A message takes its agent, user, session and reasoning
// from the AOS envelope around it, an MCP tool its server from the gateway,
// a tool result its tool from the request it answers; the record keeps none
// of those, only the views they made. So the recorded views win. Records
// without views (none are written so today) get catalog.Views over the
// input, their session from the record.
//
// When a replayed step changes the payload (a hook's recorded patch, a
// modify policy), the event derived for the next step gets catalog.Views
// over the new payload, as live, with every view that leaves empty taken
// from the record in place of the envelope.
func Event(rec *audit.Record) (*warden.Event, error) {
	ev := &warden.Event{
		Name: rec.Event, Surface: rec.Surface, Direction: rec.Direction, RequestID: rec.RequestID,
		Principal: warden.Principal{Name: rec.Caller, Tenant: rec.Tenant},
		Envelope:  warden.Envelope{SessionID: rec.SessionID},
	}
	if in := bytes.TrimSpace(rec.Input); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		p, err := decodeObject(in)
		if err != nil {
			return nil, fmt.Errorf("record %s: input: %w", rec.ID, err)
		}
		ev.Payload, ev.Raw = p, rec.Input
	}
	if ev.Payload == nil {
		ev.Payload = map[string]any{}
	}
	if len(rec.Views) == 0 {
		ev.BuildViews(catalog.Views)
		return ev, nil
	}
	v := new(views)
	if err := decodeViews(rec.Views, v); err != nil {
		return nil, fmt.Errorf("record %s: views: %w", rec.ID, err)
	}
	first := true
	ev.BuildViews(func(e *warden.Event) {
		if first { // the recorded event itself
			first = false
			v.set(e)
			return
		}
		catalog.Views(e)
		v.fill(e)
	})
	return ev, nil
}
