package otelx

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sharedtest"
)

// otelMapping is the part of ACS trace/otel-mapping.json the test checks.
type otelMapping struct {
	Properties struct {
		StepToSpan struct {
			Default map[string]struct {
				SpanName           string   `json:"span_name"`
				RequiredAttributes []string `json:"required_attributes"`
			} `json:"default"`
		} `json:"step_to_span"`
		DecisionEvent struct {
			Properties struct {
				EventName          struct{ Const string }     `json:"event_name"`
				RequiredAttributes struct{ Default []string } `json:"required_attributes"`
			} `json:"properties"`
		} `json:"decision_event"`
		ProvenanceAttributes struct {
			Properties struct {
				Required struct{ Default []string } `json:"required"`
			} `json:"properties"`
		} `json:"provenance_attributes"`
	} `json:"properties"`
}

// TestSpansFollowTheMapping: for every step of otel-mapping.json, an empty
// payload and a full one give a span of the mapping's name with every
// required attribute, and a decision event with its required attributes;
// a payload with provenance gives the provenance attributes.
func TestSpansFollowTheMapping(t *testing.T) {
	b, err := os.ReadFile(sharedtest.Path(t, "acs", "schemas", "specification", "v0.1.0", "trace", "otel-mapping.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m otelMapping
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Properties.StepToSpan.Default) < 20 {
		t.Fatalf("step_to_span: %d steps", len(m.Properties.StepToSpan.Default))
	}
	full := map[string]any{
		"tool": map[string]any{"name": "t"}, "capability": "c", "exit_status": "success", "source": map[string]any{"type": "vector_db"},
		"results": []any{1, 2}, "memory_store": map[string]any{"name": "m"}, "operation": "create", "reason": "done",
		"turn_id": "t1", "trigger": map[string]any{"type": "user"}, "outcome": "completed", "entries_to_compact": []any{1},
		"triggered_by": "manual", "entries_compacted": []any{1}, "subagent": map[string]any{"session_id": "sub", "intent_derivation": "inherited"},
		"subagent_session_id": "sub", "final_chain_hash": "h", "skill": map[string]any{"id": "sk", "digest": map[string]any{"algorithm": "sha256", "value": "ab"},
			"declared_capabilities": []any{"x"}}, "load_trigger": "explicit", "load_path": []any{"sk"},
		"format": "canonical", "components": []any{1}, "change_reason": "added",
		"content": []any{map[string]any{"type": "text", "value": "hi",
			"provenance": map[string]any{"provenance_id": "p1", "origin": "user_input"}}},
	}
	for step, want := range m.Properties.StepToSpan.Default {
		for name, p := range map[string]map[string]any{"empty": {}, "full": full} {
			t.Run(step+"/"+name, func(t *testing.T) {
				ev := &warden.Event{Name: step, Payload: p, SessionID: "s", Agent: warden.Agent{ID: "a"}}
				out := &warden.Outcome{Verdict: warden.Deny, Reason: "r"}
				it := newItem(context.Background(), ev, out, nil, nil, time.Now())
				if it.name != want.SpanName {
					t.Errorf("span %q, want %q", it.name, want.SpanName)
				}
				has := map[attribute.Key]attribute.Value{}
				for _, kv := range it.attributes() {
					has[kv.Key] = kv.Value
				}
				for _, a := range want.RequiredAttributes {
					if _, ok := has[attribute.Key(a)]; !ok {
						t.Errorf("required attribute %s missing: %v", a, it.attributes())
					}
				}
				if name == "full" {
					for _, a := range want.RequiredAttributes {
						if v := has[attribute.Key(a)]; v.Emit() == unknown {
							t.Errorf("%s = unknown with the payload %v", a, p)
						}
					}
					for _, a := range m.Properties.ProvenanceAttributes.Properties.Required.Default {
						if _, ok := has[attribute.Key(a)]; !ok {
							t.Errorf("provenance attribute %s missing", a)
						}
					}
				}
				d := map[attribute.Key]bool{}
				for _, kv := range it.decisionAttrs() {
					d[kv.Key] = true
				}
				for _, a := range append(m.Properties.DecisionEvent.Properties.RequiredAttributes.Default, "acs.reasoning") {
					if !d[attribute.Key(a)] {
						t.Errorf("decision event attribute %s missing", a)
					}
				}
			})
		}
	}
	if m.Properties.DecisionEvent.Properties.EventName.Const != "acs.decision" {
		t.Errorf("decision event %q", m.Properties.DecisionEvent.Properties.EventName.Const)
	}
}

// TestSpanReadsTheProvenanceView: the span's provenance attributes come
// from the event's provenance view when the views read one.
func TestSpanReadsTheProvenanceView(t *testing.T) {
	ev := &warden.Event{Name: "steps/toolCallResult", Payload: map[string]any{},
		Provenance: []warden.Provenance{{ID: "p2", Origin: "retrieved", SourceID: "kb", DerivedFrom: []string{"p0", "p1"}},
			{ID: "p3", Origin: "external"}}}
	it := newItem(context.Background(), ev, &warden.Outcome{Verdict: warden.Allow}, nil, nil, time.Now())
	has := map[attribute.Key]string{}
	for _, kv := range it.attributes() {
		has[kv.Key] = kv.Value.Emit()
	}
	for k, want := range map[attribute.Key]string{"acs.provenance.origin": `["external","retrieved"]`,
		"acs.provenance.source_id": `["kb"]`, "acs.provenance.lineage_depth": "2"} {
		if has[k] != want {
			t.Errorf("%s = %s, want %s", k, has[k], want)
		}
	}
}
