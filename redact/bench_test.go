package redact

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

var benchInput = []byte(`{"message":{"role":"user","id":"m2","content":[{"kind":"text","text":"What is on my calendar today?"}]},"context":{"session":{"id":"demo"}}}`)

func BenchmarkJSONNoMatch(b *testing.B) {
	r := New(make([]byte, KeySize))
	b.ReportAllocs()
	for b.Loop() {
		r.JSON(benchInput)
	}
}

// benchRecord is the record of bench/requests/tool_call.json's step as the
// trace keeps it: its params as the input and the views repeating their
// ids and arguments (what warden.Event.ViewsJSON builds for it).
func benchRecord(b *testing.B) *audit.Record {
	raw, err := os.ReadFile("../bench/requests/tool_call.json")
	if err != nil {
		b.Fatal(err)
	}
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		b.Fatal(err)
	}
	ev := &warden.Event{
		Agent:     warden.Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Personal assistant", Version: "9889", Provider: "OpenAI"},
		User:      warden.User{ID: "u-4821", Name: "Dana", Organization: "Acme"},
		SessionID: "e4368263-1797-48ac-9ca8-61a6b4ad9ea3", TurnID: "69ef57b8-3993-440d-9493-523914f3f149",
		StepID: "5a0f5d51-5d3a-4d8c-8d0e-4f4ab7a1c0de", Reasoning: "The user asked when the next roadmap sync is; search this week.",
		Tool: warden.Tool{Name: "search_calendar", ID: "c264f381-10cf-4403-bd11-383014c0fcc6", Args: map[string]any{
			"query": "team sync about the Q3 roadmap", "from": "2025-01-27", "to": "2025-01-31", "max_results": 10.0}},
	}
	return &audit.Record{Input: req.Params, Views: ev.ViewsJSON(), Reason: "allowed by policy search-ok",
		Results: []warden.Result{{Guardian: "policy", Reason: "allowed by policy search-ok"}}}
}

// BenchmarkFilterNoMatch is the trace filter on the benchmark's allowed
// tool call: the pre-scan finds nothing, so nothing is rewritten.
func BenchmarkFilterNoMatch(b *testing.B) {
	rec := benchRecord(b)
	if mayMatch(rec) {
		b.Fatal("the bench record holds a detector match")
	}
	f := New(make([]byte, KeySize)).Filter
	b.ReportAllocs()
	b.SetBytes(int64(len(rec.Input) + len(rec.Views)))
	for b.Loop() {
		r := *rec
		f(&r)
	}
}
