package acs

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// FuzzProvenance: any payload of a data-bearing hook is checked without a
// panic, strict or not; one that passes the strict check gives a
// provenance view with one object per data-bearing object field, and the
// labels of a valid view are none or untrusted_input.
func FuzzProvenance(f *testing.F) {
	for _, s := range []string{
		`{"outputs":[{"value":"a","provenance":{"provenance_id":"p1","origin":"external","derived_from":["p0"]}}]}`,
		`{"arguments":{"q":{"value":1,"provenance":{"provenance_id":"p","origin":"agent_generated","derived_from":["p","q"]}}}}`,
		`{"content":[{"type":"text","value":"x","provenance":null}]}`,
		`{"query":{"value":"q","provenance":{"origin":7}},"results":[1,{"provenance":[]}]}`,
		`{"summary":{"value":"s","provenance":{"provenance_id":"","origin":"system","source_id":{}}}}`,
	} {
		f.Add(s, uint8(0))
	}
	methods := make([]string, 0, len(catalog.DataFields))
	for m := range catalog.DataFields {
		methods = append(methods, m)
	}
	f.Fuzz(func(t *testing.T, payload string, which uint8) {
		dec := json.NewDecoder(bytes.NewReader([]byte(payload)))
		dec.UseNumber()
		var p map[string]any
		if dec.Decode(&p) != nil || p == nil {
			return
		}
		method := methods[int(which)%len(methods)]
		checkProvenance(method, p, false)
		if checkProvenance(method, p, true) != nil {
			return
		}
		ev := &warden.Event{Name: method, Surface: warden.SurfaceACS, Payload: p}
		catalog.Views(ev)
		n := 0
		catalog.EachDataField(method, p, func(_, _ string, v any) {
			if _, ok := v.(map[string]any); ok {
				n++
			}
		})
		if len(ev.Provenance) != n {
			t.Fatalf("%s %s: %d provenance views for %d fields", method, payload, len(ev.Provenance), n)
		}
		if ls := warden.ProvenanceLabels(ev.Provenance); ls != nil && (len(ls) != 1 || ls[0] != labels.UntrustedInput) {
			t.Fatalf("labels %q", ls)
		}
	})
}
