package ocsf

import (
	"strconv"
	"strings"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// provenance is the provenance of a record's step: the provenance view
// it was decided on, or, when that holds none (a record stored without
// one, a surface whose views do not read provenance), the provenance
// objects found in its stored input.
func provenance(r *audit.Record, p map[string]any) []warden.Provenance {
	if ps := r.Provenance(); len(ps) > 0 {
		return ps
	}
	return audit.PayloadProvenance(p)
}

// provenanceObjects is unmapped.acs.provenance: the provenance objects as
// ACS names their fields (provenance_id, origin, source_id, derived_from;
// those absent left out).
func provenanceObjects(ps []warden.Provenance) []Event {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Event, len(ps))
	for i, x := range ps {
		o := Event{"origin": x.Origin}
		if x.ID != "" {
			o["provenance_id"] = x.ID
		}
		if x.SourceID != "" {
			o["source_id"] = x.SourceID
		}
		if len(x.DerivedFrom) > 0 {
			o["derived_from"] = x.DerivedFrom
		}
		out[i] = o
	}
	return out
}

// enrichments are the mapping's provenance_metadata: one enrichment per
// provenance fact, named acs_provenance_origin (required),
// acs_provenance_source_id and acs_provenance_lineage_depth, each value
// the distinct values joined by ", " and data the facts
// (audit.SummarizeProvenance).
func enrichments(ps []warden.Provenance) []Event {
	s := audit.SummarizeProvenance(ps)
	if len(s.Origins) == 0 {
		return nil
	}
	out := []Event{{"name": "acs_provenance_origin", "value": join(s.Origins), "type": "acs_provenance",
		"data": Event{"origins": s.Origins}}}
	if len(s.SourceIDs) > 0 {
		out = append(out, Event{"name": "acs_provenance_source_id", "value": join(s.SourceIDs), "type": "acs_provenance",
			"data": Event{"source_ids": s.SourceIDs}})
	}
	if s.LineageDepth > 0 {
		out = append(out, Event{"name": "acs_provenance_lineage_depth", "value": itoa(s.LineageDepth), "type": "acs_provenance",
			"data": Event{"lineage_depth": s.LineageDepth}})
	}
	return out
}

func join(ss []string) string { return strings.Join(ss, ", ") }

func itoa(n int) string { return strconv.Itoa(n) }

// str returns the string at path in p ("" when absent).
func str(p map[string]any, path ...string) string {
	var v any = p
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// or returns the first of vs that is not "".
func or(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
