package audit

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/jsonpointer"
)

// Evaluator is the ACS evaluator of a decision's results: "agent" when a
// remote guardian (an AOS/ACS hook, Kind "aos") decided, "composite" when
// it and local policies or hooks did, "deterministic" otherwise. Shadow
// results do not count.
func Evaluator(results []warden.Result) string {
	var agent, local bool
	for _, r := range results {
		switch {
		case r.Mode == "shadow" || r.Kind == warden.KindShadowSet:
		case r.Kind == "aos":
			agent = true
		default:
			local = true
		}
	}
	switch {
	case agent && local:
		return "composite"
	case agent:
		return "agent"
	}
	return "deterministic"
}

// ProvenanceSummary is the provenance facts of a step as the ACS trace
// mappings name them (acs.provenance.origin, .source_id, .lineage_depth;
// OCSF's acs_provenance_* enrichments).
type ProvenanceSummary struct {
	Origins   []string // the distinct origins, sorted
	SourceIDs []string // the distinct source ids, sorted
	// LineageDepth is the longest derived_from (0 when none has one).
	LineageDepth int
}

// SummarizeProvenance summarises provenance objects; the zero summary
// (no Origins) when ps has none with an origin.
func SummarizeProvenance(ps []warden.Provenance) ProvenanceSummary {
	var s ProvenanceSummary
	for _, p := range ps {
		if p.Origin != "" && !slices.Contains(s.Origins, p.Origin) {
			s.Origins = append(s.Origins, p.Origin)
		}
		if p.SourceID != "" && !slices.Contains(s.SourceIDs, p.SourceID) {
			s.SourceIDs = append(s.SourceIDs, p.SourceID)
		}
		s.LineageDepth = max(s.LineageDepth, len(p.DerivedFrom))
	}
	slices.Sort(s.Origins)
	slices.Sort(s.SourceIDs)
	return s
}

// Provenance returns the provenance view the record's step was decided on
// (Event.Provenance, as ViewsJSON stored it); nil when the views hold none
// or the record has no views.
func (r *Record) Provenance() []warden.Provenance {
	if len(r.Views) == 0 {
		return nil
	}
	var v struct {
		Provenance []warden.Provenance `json:"provenance"`
	}
	if json.Unmarshal(r.Views, &v) != nil || len(v.Provenance) == 0 {
		return nil
	}
	return v.Provenance
}

// maxPayloadProvenance bounds the provenance objects PayloadProvenance
// reads from one payload; maxPayloadDepth how deep it looks.
const (
	maxPayloadProvenance = 256
	maxPayloadDepth      = 8
)

// PayloadProvenance finds the provenance objects anywhere in a payload,
// leniently: every object under a "provenance" key with a string origin,
// in payload order (object members by name), at most 256 of them and to a
// bounded depth. It is for the trace exporters when the core extracted no
// provenance (an event whose views were not built, a record stored
// without a provenance view, a surface the views do not read provenance
// on): the views read it from the data-bearing fields of ACS steps only,
// and require a provenance_id (ID may be "" here).
func PayloadProvenance(p map[string]any) []warden.Provenance {
	if !hasProvenance(p, 0) {
		return nil // most payloads: no sorting, no allocation
	}
	var out []warden.Provenance
	path := make([]string, 0, maxPayloadDepth+2)
	var visit func(v any, level int)
	visit = func(v any, level int) {
		if level > maxPayloadDepth || len(out) >= maxPayloadProvenance {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if pm, ok := t[k].(map[string]any); ok && k == "provenance" {
					if x, ok := lenientProvenance(pm); ok && len(out) < maxPayloadProvenance {
						x.Field = jsonpointer.Format(append(path, k))
						out = append(out, x)
					}
					continue
				}
				path = append(path, k)
				visit(t[k], level+1)
				path = path[:len(path)-1]
			}
		case []any:
			for i, x := range t {
				path = append(path, strconv.Itoa(i))
				visit(x, level+1)
				path = path[:len(path)-1]
			}
		}
	}
	visit(p, 0)
	return out
}

// hasProvenance reports whether PayloadProvenance finds anything in v.
func hasProvenance(v any, level int) bool {
	if level > maxPayloadDepth {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if pm, ok := x.(map[string]any); ok && k == "provenance" {
				if o, _ := pm["origin"].(string); o != "" {
					return true
				}
				continue
			}
			if hasProvenance(x, level+1) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasProvenance(x, level+1) {
				return true
			}
		}
	}
	return false
}

// lenientProvenance reads a provenance object that has a string origin.
func lenientProvenance(pm map[string]any) (warden.Provenance, bool) {
	origin, _ := pm["origin"].(string)
	if origin == "" {
		return warden.Provenance{}, false
	}
	x := warden.Provenance{Origin: origin}
	x.ID, _ = pm["provenance_id"].(string)
	x.SourceID, _ = pm["source_id"].(string)
	if df, ok := pm["derived_from"].([]any); ok {
		for _, d := range df {
			if s, ok := d.(string); ok {
				x.DerivedFrom = append(x.DerivedFrom, s)
			}
		}
	}
	return x, true
}
