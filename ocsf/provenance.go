package ocsf

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden"
)

// maxProvenance bounds the provenance objects read from one payload.
const maxProvenance = 256

// provenance lists the provenance objects of a payload ({provenance_id,
// origin, source_id, derived_from, ...}) as they were recorded, at most
// maxProvenance of them, in payload order (keys sorted), to a bounded
// depth.
func provenance(p map[string]any) []Event {
	var out []Event
	var visit func(v any, level int)
	visit = func(v any, level int) {
		if level > 8 || len(out) >= maxProvenance {
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
					if str(pm, "origin") != "" && len(out) < maxProvenance {
						out = append(out, pm)
					}
					continue
				}
				visit(t[k], level+1)
			}
		case []any:
			for _, x := range t {
				visit(x, level+1)
			}
		}
	}
	visit(p, 0)
	return out
}

// enrichments are the mapping's provenance_metadata: one enrichment per
// provenance fact, named acs_provenance_origin (required),
// acs_provenance_source_id and acs_provenance_lineage_depth, each value
// the distinct values joined by ", " and data the provenance objects.
func enrichments(p map[string]any) []Event {
	pv := provenance(p)
	if len(pv) == 0 {
		return nil
	}
	var origins, sources []string
	depth := 0
	for _, x := range pv {
		if o := str(x, "origin"); o != "" && !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
		if s := str(x, "source_id"); s != "" && !slices.Contains(sources, s) {
			sources = append(sources, s)
		}
		if d, ok := x["lineage_depth"].(float64); ok && int(d) > depth {
			depth = int(d)
		}
		if a, ok := x["derived_from"].([]any); ok && len(a) > depth {
			depth = len(a)
		}
	}
	slices.Sort(origins)
	slices.Sort(sources)
	out := []Event{{"name": "acs_provenance_origin", "value": join(origins), "type": "acs_provenance",
		"data": Event{"origins": origins}}}
	if len(sources) > 0 {
		out = append(out, Event{"name": "acs_provenance_source_id", "value": join(sources), "type": "acs_provenance",
			"data": Event{"source_ids": sources}})
	}
	if depth > 0 {
		out = append(out, Event{"name": "acs_provenance_lineage_depth", "value": itoa(depth), "type": "acs_provenance",
			"data": Event{"lineage_depth": depth}})
	}
	return out
}

// evaluator is the ACS evaluator of a record: "agent" when a remote
// guardian (an AOS/ACS hook) decided, "composite" when it and local
// policies or hooks did, "deterministic" otherwise.
func evaluator(rs []warden.Result) string {
	var agent, local bool
	for _, r := range rs {
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
