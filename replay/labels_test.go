package replay

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// A replayed step sees the session's labels and the provenance its record
// kept, not whatever the store holds now.
func TestEventKeepsLabelsAndProvenance(t *testing.T) {
	ev := &warden.Event{Name: "steps/toolCallResult", Surface: warden.SurfaceACS, SessionID: "s1",
		SessionLabels: []string{"read_private", "untrusted_input"},
		Provenance:    []warden.Provenance{{Field: "/outputs/0/provenance", ID: "p1", Origin: "external", SourceID: "https://x", DerivedFrom: []string{"p0"}}},
		Tool:          warden.Tool{Name: "fetch", Args: map[string]any{}}}
	rec := &audit.Record{ID: "r1", Event: ev.Name, Surface: ev.Surface, SessionID: "s1",
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
	if got, _ = Event(rec); got.SessionLabels != nil || got.Provenance != nil || got.LabelsUnread {
		t.Fatalf("replayed labels %q, provenance %+v from a record without", got.SessionLabels, got.Provenance)
	}
	// A record whose labels were not read says so: a policy of now that
	// reads them cannot decide it (labels.ErrUnread), not see none.
	ev.LabelsUnread = true
	rec.Views = ev.ViewsJSON()
	if got, _ = Event(rec); !got.LabelsUnread || got.SessionLabels != nil {
		t.Fatalf("replayed unread %v, labels %q", got.LabelsUnread, got.SessionLabels)
	}
}

// The result that lists the labels a step added is no step of the chain.
func TestStepsSkipLabelsResult(t *testing.T) {
	rec := &audit.Record{Results: []warden.Result{
		{Guardian: "policy", PolicyID: "p", Decision: "modify", Mode: "enforce"},
		{Guardian: "session", Kind: warden.KindLabels, Decision: "modify", Mode: "enforce", Labels: []string{"read_private"}},
	}}
	if st := steps(rec, nil); len(st) != 1 || st[0].Name != "policy" {
		t.Fatalf("steps %+v", st)
	}
}
