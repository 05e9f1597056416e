package warden

import "github.com/wardenhq/warden/labels"

// Provenance is one ACS Provenance object (ACS §7) found on a data-bearing
// field of an event's payload: the provenance view policies read as
// `provenance` (a list, in payload order).
type Provenance struct {
	// Field is where the object sits, as a JSON Pointer into the payload
	// (e.g. /outputs/0/provenance).
	Field       string   `json:"field"`
	ID          string   `json:"provenance_id"`
	Origin      string   `json:"origin"`                 // user_input, system, tool_output, ...
	SourceID    string   `json:"source_id,omitempty"`    // "" when absent
	DerivedFrom []string `json:"derived_from,omitempty"` // nil when absent
}

// Provenance origins (ACS §7).
const (
	OriginUserInput      = "user_input"
	OriginSystem         = "system"
	OriginToolOutput     = "tool_output"
	OriginRetrieved      = "retrieved"
	OriginAgentGenerated = "agent_generated"
	OriginA2AInbound     = "a2a_inbound"
	OriginExternal       = "external"
)

// ProvenanceLabels returns the session labels the provenance of a step's
// data sets, by the ACS default channel-to-trust mapping (§7.2): data of
// an untrusted origin — tool_output, retrieved, a2a_inbound or external —
// sets untrusted_input; user_input and system set none; agent_generated
// data is as trusted as the least trusted entry of its derived_from
// lineage that the same payload describes (no amount of processing
// launders untrusted data), and sets none when none of its lineage is in
// the payload. nil when nothing is untrusted.
func ProvenanceLabels(ps []Provenance) []string {
	untrusted := func(o string) bool {
		switch o {
		case OriginToolOutput, OriginRetrieved, OriginA2AInbound, OriginExternal:
			return true
		}
		return false
	}
	byID := make(map[string]*Provenance, len(ps))
	for i := range ps {
		byID[ps[i].ID] = &ps[i]
	}
	// lineage reports whether p, or what it derives from, is untrusted;
	// seen bounds the walk (lineage may name a cycle).
	seen := map[string]bool{}
	var walk func(p *Provenance) bool
	walk = func(p *Provenance) bool {
		if untrusted(p.Origin) {
			return true
		}
		if p.Origin != OriginAgentGenerated || seen[p.ID] {
			return false
		}
		seen[p.ID] = true
		for _, id := range p.DerivedFrom {
			if q := byID[id]; q != nil && walk(q) {
				return true
			}
		}
		return false
	}
	for i := range ps {
		if walk(&ps[i]) {
			return []string{labels.UntrustedInput}
		}
	}
	return nil
}
