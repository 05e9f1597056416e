package replay

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
)

// A replayed step sees the session's labels and the provenance its record
// kept, not whatever the store holds now.
func TestEventKeepsLabelsAndProvenance(t *testing.T) {
	ev := &warden.Event{Name: "steps/toolCallResult", Surface: warden.SurfaceACS, SessionID: "s1",
		SessionLabels: []string{"read_private", "untrusted_input"},
		Provenance:    []warden.Provenance{{Field: "/outputs/0/provenance", ID: "p1", Origin: "external", SourceID: "https://x", DerivedFrom: []string{"p0"}}},
		Tool:          warden.Tool{Name: "fetch", Args: map[string]any{}}}
	rec := &warden.Record{ID: "r1", Event: ev.Name, Surface: ev.Surface, SessionID: "s1",
		Input: json.RawMessage(`{"tool":{"name":"fetch"},"exit_status":"success","outputs":[]}`), Views: ev.ViewsJSON()}
	got, err := Event(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.SessionLabels, ev.SessionLabels) || !reflect.DeepEqual(got.Provenance, ev.Provenance) {
		t.Fatalf("replayed labels %q, provenance %+v", got.SessionLabels, got.Provenance)
	}
	// A record without them gets none.
	ev.SessionLabels, ev.Provenance = nil, nil
	rec.Views = ev.ViewsJSON()
	if got, _ = Event(rec); got.SessionLabels != nil || got.Provenance != nil {
		t.Fatalf("replayed labels %q, provenance %+v from a record without", got.SessionLabels, got.Provenance)
	}
}
