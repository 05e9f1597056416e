package warden

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/wardenhq/warden/internal/jsontest"
)

// The reference: the views as encoding/json encoded them before the
// hand-written encoder (the struct shape ViewsJSON had). The hash chain
// covers these bytes, so the encoder must write exactly these.
type refViews struct {
	Agent      refAgent     `json:"agent"`
	User       refUser      `json:"user"`
	Session    refSession   `json:"session"`
	Turn       string       `json:"turn"`
	Step       string       `json:"step"`
	Tool       refTool      `json:"tool"`
	Message    refMessage   `json:"message"`
	Reasoning  string       `json:"reasoning"`
	Provenance []Provenance `json:"provenance,omitempty"`
	MCP        *refMCP      `json:"mcp,omitempty"`
	Approved   []Cover      `json:"approved,omitempty"`
}

type refMCP struct {
	ToolChanges []ToolChange `json:"tool_changes"`
}

type refAgent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type refUser struct {
	ID           string `json:"id"`
	Email        string `json:"email"`
	Name         string `json:"name"`
	Organization string `json:"organization"`
}

type refSession struct {
	ID     string   `json:"id"`
	Labels []string `json:"labels,omitempty"`
	Unread bool     `json:"labels_unread,omitempty"`
}

type refTool struct {
	Name   string         `json:"name"`
	ID     string         `json:"id"`
	Server string         `json:"server"`
	Args   map[string]any `json:"args"`
}

type refMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// refViewsJSON is ViewsJSON as encoding/json wrote it.
func refViewsJSON(e *Event) []byte {
	args := e.Tool.Args
	if args == nil {
		args = map[string]any{}
	}
	var prov []Provenance
	for _, p := range e.Provenance {
		prov = append(prov, Provenance(p))
	}
	var mcp *refMCP
	if len(e.ToolChanges) > 0 {
		mcp = &refMCP{e.ToolChanges}
	}
	b, err := json.Marshal(refViews{
		Agent: refAgent(e.Agent), User: refUser(e.User), Session: refSession{e.SessionID, e.SessionLabels, e.LabelsUnread},
		Turn: e.TurnID, Step: e.StepID,
		Tool:    refTool{Name: e.Tool.Name, ID: e.Tool.ID, Server: e.Tool.Server, Args: args},
		Message: refMessage(e.Message), Reasoning: e.Reasoning, Provenance: prov, MCP: mcp,
		Approved: e.Envelope.Approved,
	})
	if err != nil {
		return nil
	}
	return b
}

func genEvent(g jsontest.Gen) *Event {
	e := &Event{
		Agent:     Agent{g.Str(), g.Str(), g.Str(), g.Str(), g.Str()},
		User:      User{g.Str(), g.Str(), g.Str(), g.Str()},
		SessionID: g.Str(), TurnID: g.Str(), StepID: g.Str(),
		Tool:    Tool{Name: g.Str(), ID: g.Str(), Server: g.Str()},
		Message: Message{g.Str(), g.Str()}, Reasoning: g.Str(),
		SessionLabels: g.Strs(), LabelsUnread: g.R.IntN(2) == 0,
	}
	if g.R.IntN(4) > 0 {
		e.Tool.Args = g.Obj(0)
	}
	for n := g.R.IntN(3) * g.R.IntN(2); n > 0; n-- {
		e.Provenance = append(e.Provenance, Provenance{g.Str(), g.Str(), g.Str(), g.Str(), g.Strs()})
	}
	for n := g.R.IntN(3) * g.R.IntN(2); n > 0; n-- {
		tc := ToolChange{Change: g.Str(), Server: g.Str(), Name: g.Str()}
		if g.R.IntN(2) == 0 {
			tc.New = &ToolDef{Name: g.Str(), Description: g.Str()}
		}
		e.ToolChanges = append(e.ToolChanges, tc)
	}
	for n := g.R.IntN(3) * g.R.IntN(2); n > 0; n-- {
		e.Envelope.Approved = append(e.Envelope.Approved, Cover{g.Str(), g.Str()})
	}
	return e
}

// TestViewsJSONMatchesEncodingJSON checks ViewsJSON against encoding/json
// on random events: the same bytes, or both failing (a NaN in the tool
// arguments).
func TestViewsJSONMatchesEncodingJSON(t *testing.T) {
	g := jsontest.Gen{R: rand.New(rand.NewPCG(1, 2))}
	failed := 0
	for i := range 20000 {
		e := genEvent(g)
		want, got := refViewsJSON(e), e.ViewsJSON()
		if want == nil {
			failed++
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if failed == 0 || failed > 10000 {
		t.Fatalf("%d of 20000 events failed to encode: the generator should make a few fail, not most", failed)
	}
}

// benchEvent is a tool call's event after the views: the request of
// bench/requests/tool_call.json as the catalog's views show it.
func benchEvent() *Event {
	return &Event{
		Name: "steps/toolCallRequest", Surface: SurfaceAOS,
		Agent:     Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Personal assistant", Version: "9889", Provider: "OpenAI"},
		User:      User{ID: "u-42", Email: "ada@example.com", Name: "Ada"},
		SessionID: "8c7f0f5e-3a6e-4d0c-9a43-2b8e6f0c1d11", TurnID: "turn-3", StepID: "step-7",
		Tool: Tool{Name: "search_calendar", ID: "c264f381-10cf-4403-bd11-383014c0fcc6", Args: map[string]any{
			"query": "team sync about the Q3 roadmap", "from": "2025-01-27", "to": "2025-01-31", "max_results": 10.0,
		}},
		Reasoning: "The user asked when the next roadmap sync is; search this week.",
	}
}

// BenchmarkViewsJSON is the views of a record (NewRecord's Views).
func BenchmarkViewsJSON(b *testing.B) {
	e := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		if e.ViewsJSON() == nil {
			b.Fatal("no views")
		}
	}
}
