package catalog

import (
	"sort"
	"strconv"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/jsonpointer"
)

// DataFields are the data-bearing fields of each ACS hook payload that
// carry a Provenance object (ACS §7; the hook schemas under
// specification/v0.1.0/hooks/ put `provenance` on exactly these): a path
// whose "[]" is every item of an array and ".*" every value of an object.
// The ACS endpoint validates the provenance it finds there (and requires
// it in a session that declared acs-provenance); the views read it.
var DataFields = map[string][]string{
	MethodUserMessage:            {"content[]"},
	MethodAgentResponse:          {"content[]"},
	MethodKnowledgeRetrieval:     {"query", "results[]"},
	MethodMemoryContextRetrieval: {"query", "results[]"},
	MethodMemoryStore:            {"content"},
	MethodToolCallRequest:        {"arguments.*"},
	MethodToolCallResult:         {"outputs[]"},
	MethodPostCompact:            {"summary"},
	MethodSubagentStop:           {"summary"},
	MethodTurnEnd:                {"summary"},
}

// EachDataField calls fn with every data-bearing field of an ACS payload
// of method that is present: its place as a JSON Pointer (/outputs/0) and
// in the dotted form ACS errors name (outputs[0]), and its value (an
// object, or whatever else is there: the caller judges). Object members
// (arguments.*) come in name order.
func EachDataField(method string, p map[string]any, fn func(ptr, dotted string, v any)) {
	for _, path := range DataFields[method] {
		switch {
		case strings.HasSuffix(path, "[]"):
			key := strings.TrimSuffix(path, "[]")
			items, _ := p[key].([]any)
			for i, it := range items {
				n := strconv.Itoa(i)
				fn("/"+key+"/"+n, key+"["+n+"]", it)
			}
		case strings.HasSuffix(path, ".*"):
			key := strings.TrimSuffix(path, ".*")
			m, _ := p[key].(map[string]any)
			names := make([]string, 0, len(m))
			for k := range m {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				fn("/"+key+"/"+jsonpointer.Escape(k), key+"."+k, m[k])
			}
		default:
			if v, ok := p[path]; ok {
				fn("/"+path, path, v)
			}
		}
	}
}

// provenanceViews reads the Provenance objects of an ACS payload's
// data-bearing fields into ev.Provenance, leniently: an object without a
// string provenance_id and origin is skipped (the ACS endpoint refuses
// such payloads before they are decided; other surfaces are not checked).
func provenanceViews(ev *warden.Event, p map[string]any) {
	EachDataField(ev.Name, p, func(ptr, _ string, v any) {
		f, _ := v.(map[string]any)
		pv, _ := f["provenance"].(map[string]any)
		id, ok1 := pv["provenance_id"].(string)
		origin, ok2 := pv["origin"].(string)
		if !ok1 || !ok2 {
			return
		}
		x := warden.Provenance{Field: ptr + "/provenance", ID: id, Origin: origin}
		x.SourceID, _ = pv["source_id"].(string)
		if df, ok := pv["derived_from"].([]any); ok {
			for _, d := range df {
				if s, ok := d.(string); ok {
					x.DerivedFrom = append(x.DerivedFrom, s)
				}
			}
		}
		ev.Provenance = append(ev.Provenance, x)
	})
}
