package warden

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden/labels"
)

func TestProvenanceLabels(t *testing.T) {
	p := func(id, origin string, from ...string) Provenance {
		return Provenance{ID: id, Origin: origin, DerivedFrom: from}
	}
	for _, tt := range []struct {
		name string
		ps   []Provenance
		want []string
	}{
		{"none", nil, nil},
		{"user input", []Provenance{p("p1", OriginUserInput)}, nil},
		{"system", []Provenance{p("p1", OriginSystem)}, nil},
		{"tool output", []Provenance{p("p1", OriginToolOutput)}, []string{labels.UntrustedInput}},
		{"retrieved", []Provenance{p("p1", OriginRetrieved)}, []string{labels.UntrustedInput}},
		{"a2a inbound", []Provenance{p("p1", OriginA2AInbound)}, []string{labels.UntrustedInput}},
		{"external", []Provenance{p("p1", OriginUserInput), p("p2", OriginExternal)}, []string{labels.UntrustedInput}},
		{"agent generated from trusted", []Provenance{p("p1", OriginUserInput), p("p2", OriginAgentGenerated, "p1")}, nil},
		{"agent generated from untrusted", []Provenance{p("p1", OriginAgentGenerated, "p0", "p2"), p("p2", OriginAgentGenerated, "p3"),
			p("p3", OriginRetrieved)}, []string{labels.UntrustedInput}},
		{"agent generated, lineage elsewhere", []Provenance{p("p1", OriginAgentGenerated, "p9")}, nil},
		{"lineage cycle", []Provenance{p("p1", OriginAgentGenerated, "p2"), p("p2", OriginAgentGenerated, "p1")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProvenanceLabels(tt.ps); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ProvenanceLabels = %q, want %q", got, tt.want)
			}
		})
	}
}
