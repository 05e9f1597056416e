package ocsf

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sharedtest"
)

var update = flag.Bool("update", false, "rewrite the golden file in testdata")

// classRequired are the fields each OCSF 1.5 class used here requires
// beyond the base event's (category_uid, class_uid, activity_id, type_uid,
// time, severity_id, metadata): System Activity classes need the actor and
// the device; each class its own object.
var classRequired = map[int][]string{
	1007: {"actor", "device", "process"},
	1005: {"actor", "device", "module"},
	3002: {"user"},
	6002: {"app"},
	6005: {"actor"},
	5001: {"device"},
	2004: {"finding_info", "finding_info.uid", "finding_info.title"},
}

var baseRequired = []string{"category_uid", "class_uid", "activity_id", "type_uid", "time", "severity_id",
	"metadata", "metadata.version", "metadata.product", "metadata.product.vendor_name"}

// field returns the value at a dotted path of ev.
func field(ev Event, path string) (any, bool) {
	var v any = ev
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(Event)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// mapping is the part of ACS trace/ocsf-mapping.json the tests check.
type mapping struct {
	Properties struct {
		StepToClass struct {
			Default map[string]struct {
				ClassUID   int    `json:"class_uid"`
				ClassName  string `json:"class_name"`
				ActivityID *int   `json:"activity_id"`
			} `json:"default"`
		} `json:"step_to_class"`
		DecisionClass struct {
			Properties struct {
				ClassUID       struct{ Const int }        `json:"class_uid"`
				ClassName      struct{ Const string }     `json:"class_name"`
				RequiredFields struct{ Default []string } `json:"required_fields"`
			} `json:"properties"`
		} `json:"decision_class"`
		SeverityMapping struct {
			Default map[string]int `json:"default"`
		} `json:"severity_mapping"`
		ProvenanceMetadata struct {
			Properties struct {
				RequiredEnrichments struct{ Default []string } `json:"required_enrichments"`
			} `json:"properties"`
		} `json:"provenance_metadata"`
	} `json:"properties"`
}

func readMapping(t *testing.T) mapping {
	b, err := os.ReadFile(sharedtest.Path(t, "acs", "schemas", "specification", "v0.1.0", "trace", "ocsf-mapping.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m mapping
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Properties.StepToClass.Default) == 0 || len(m.Properties.DecisionClass.Properties.RequiredFields.Default) == 0 {
		t.Fatal("ocsf-mapping.json: no step_to_class or decision_class.required_fields")
	}
	return m
}

func record(event, decision string, input map[string]any) *audit.Record {
	in, _ := json.Marshal(input)
	return &audit.Record{ID: "0190c9e2-0000-7000-8000-000000000001", Time: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC),
		Event: event, Surface: warden.SurfaceACS, RequestID: "req-1", AgentID: "agent-1", SessionID: "sess-1",
		TurnID: "turn-1", StepID: "req-1", Decision: decision, Reason: "because", ReasonCodes: []string{"policy_deny"},
		PolicyID: "p-1", PolicyVersion: "3", Input: in, Tool: tool(event, input),
		Results: []warden.Result{{Guardian: "policy", PolicyID: "p-1", Decision: decision, Mode: "enforce", Kind: "policy"}}}
}

func tool(event string, in map[string]any) string {
	if strings.Contains(event, "toolCall") {
		return "database_query"
	}
	return ""
}

// checkRequired fails for each base, class and (for 2004) mapping
// required field ev lacks.
func checkRequired(t *testing.T, ev Event, m mapping) {
	t.Helper()
	uid, _ := ev["class_uid"].(int)
	req := append(append([]string{}, baseRequired...), classRequired[uid]...)
	if uid == 2004 {
		req = append(req, m.Properties.DecisionClass.Properties.RequiredFields.Default...)
	}
	for _, f := range req {
		if _, ok := field(ev, f); !ok {
			t.Errorf("class %d: required field %s missing", uid, f)
		}
	}
	act, _ := ev["activity_id"].(int)
	if ev["type_uid"] != uid*100+act {
		t.Errorf("type_uid %v, want %d", ev["type_uid"], uid*100+act)
	}
}

// TestEventsFollowTheMapping: every step of ocsf-mapping.json, allowed
// and denied, gives an event of the mapping's class and activity with
// every required field, the disposition's severity, and for a refusal a
// Detection Finding with the mapping's required fields.
func TestEventsFollowTheMapping(t *testing.T) {
	m := readMapping(t)
	input := map[string]any{"tool": map[string]any{"name": "database_query"}, "capability": "datastore.read",
		"arguments": map[string]any{"q": map[string]any{"value": "x",
			"provenance": map[string]any{"provenance_id": "p1", "origin": "user_input", "source_id": "u-1"}}}}
	for step, want := range m.Properties.StepToClass.Default {
		for _, decision := range []string{"allow", "modify", "ask", "defer", "deny"} {
			t.Run(step+"/"+decision, func(t *testing.T) {
				evs := Events(record(step, decision, input))
				if decision == "allow" && len(evs) != 1 || decision != "allow" && len(evs) != 2 {
					t.Fatalf("%d events", len(evs))
				}
				ev := evs[0]
				if ev["class_uid"] != want.ClassUID || ev["class_name"] != want.ClassName {
					t.Errorf("class %v %v, want %d %s", ev["class_uid"], ev["class_name"], want.ClassUID, want.ClassName)
				}
				if want.ActivityID != nil && ev["activity_id"] != *want.ActivityID {
					t.Errorf("activity_id %v, want %d", ev["activity_id"], *want.ActivityID)
				}
				for _, e := range evs {
					checkRequired(t, e, m)
					if e["severity_id"] != m.Properties.SeverityMapping.Default[decision] {
						t.Errorf("severity_id %v, want %d", e["severity_id"], m.Properties.SeverityMapping.Default[decision])
					}
					en, _ := e["enrichments"].([]Event)
					for _, name := range m.Properties.ProvenanceMetadata.Properties.RequiredEnrichments.Default {
						found := false
						for _, x := range en {
							found = found || x["name"] == name
						}
						if !found {
							t.Errorf("enrichment %s missing: %v", name, en)
						}
					}
				}
				if len(evs) == 2 {
					f := evs[1]
					dc := m.Properties.DecisionClass.Properties
					if f["class_uid"] != dc.ClassUID.Const || f["class_name"] != dc.ClassName.Const {
						t.Errorf("finding class %v %v", f["class_uid"], f["class_name"])
					}
				}
			})
		}
	}
}

// TestEventsOfOtherSurfaces: events the mapping does not name (wrapped
// MCP, AGH hooks, AOS without a tool) still carry every required field.
func TestEventsOfOtherSurfaces(t *testing.T) {
	m := readMapping(t)
	for _, tc := range []struct {
		event, tool, dir string
		class            int
	}{
		{"protocols/MCP/tools/call", "read_file", "", 1007},
		{"protocols/MCP", "read_file", warden.Inbound, 1007},
		{"tool.pre_call", "Bash", "", 1007},
		{"steps/message", "", "", 6002},
		{"session.started", "", "", 6002},
	} {
		for _, decision := range []string{"allow", "deny"} {
			r := record(tc.event, decision, map[string]any{})
			r.Tool, r.Direction = tc.tool, tc.dir
			evs := Events(r)
			if evs[0]["class_uid"] != tc.class {
				t.Errorf("%s: class %v, want %d", tc.event, evs[0]["class_uid"], tc.class)
			}
			for _, e := range evs {
				checkRequired(t, e, m)
			}
		}
	}
}

// TestGolden pins the wire form of a few events (go test -update rewrites it).
func TestGolden(t *testing.T) {
	prov := map[string]any{"provenance_id": "p1", "origin": "tool_output", "source_id": "web-3", "derived_from": []any{"p0"}}
	recs := []*audit.Record{
		record("steps/toolCallRequest", "deny", map[string]any{"tool": map[string]any{"name": "database_query"},
			"capability": "datastore.read", "arguments": map[string]any{"q": map[string]any{"value": "[REDACTED:email:1a2b3c4d]", "provenance": prov}}}),
		record("steps/sessionStart", "allow", map[string]any{"agent": map[string]any{"id": "agent-1"}}),
		record("steps/memoryStore", "ask", map[string]any{"memory_store": map[string]any{"name": "notes"}, "operation": "update"}),
		record("steps/skillLoad", "allow", map[string]any{"skill": map[string]any{"id": "pdf"}}),
		record("agbom/snapshot", "allow", map[string]any{"agbom": map[string]any{"components": []any{}}}),
	}
	var buf bytes.Buffer
	for _, r := range recs {
		for _, e := range Events(r) {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	path := filepath.Join("testdata", "events.golden.jsonl")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("events differ from %s (go test -update to rewrite):\n%s", path, buf.String())
	}
}

// FuzzEvents: any stored input renders (never a panic) as JSON.
func FuzzEvents(f *testing.F) {
	f.Add([]byte(`{"tool":{"name":"x"},"arguments":{"a":{"value":1,"provenance":{"origin":"user_input"}}}}`), "steps/toolCallRequest", "deny")
	f.Add([]byte(`[1,2]`), "steps/memoryStore", "ask")
	f.Add([]byte(`{"provenance":{"origin":3,"derived_from":"x"}}`), "agbom/changed", "allow")
	f.Fuzz(func(t *testing.T, in []byte, event, decision string) {
		r := &audit.Record{ID: "x", Event: event, Decision: decision, Input: in}
		for _, e := range Events(r) {
			if _, err := json.Marshal(e); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestEventsReadTheProvenanceView: a record's provenance comes from its
// views (what the step was decided on) when they hold it, and gives the
// events its stored input would; without a view, from the input.
func TestEventsReadTheProvenanceView(t *testing.T) {
	in := map[string]any{"tool": map[string]any{"name": "database_query"}, "arguments": map[string]any{"q": map[string]any{"value": "x",
		"provenance": map[string]any{"provenance_id": "p1", "origin": "tool_output", "source_id": "web-3", "derived_from": []any{"p0"}}}}}
	r := record("steps/toolCallRequest", "deny", in)
	fromInput, _ := json.Marshal(Events(r))
	r.Views = json.RawMessage(`{"provenance":[{"field":"/arguments/q/provenance","provenance_id":"p1","origin":"tool_output","source_id":"web-3","derived_from":["p0"]}]}`)
	fromViews, _ := json.Marshal(Events(r))
	if !bytes.Equal(fromViews, fromInput) {
		t.Errorf("from the views:\n%s\nfrom the input:\n%s", fromViews, fromInput)
	}
	r.Input = []byte(`{}`)
	r.Views = json.RawMessage(`{"provenance":[{"field":"/content/provenance","provenance_id":"p2","origin":"retrieved"}]}`)
	en, _ := Events(r)[0]["enrichments"].([]Event)
	if len(en) != 1 || en[0]["value"] != "retrieved" {
		t.Errorf("enrichments %v, want the view's origin only", en)
	}
}
