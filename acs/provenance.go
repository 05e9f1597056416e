package acs

import (
	"slices"
	"strconv"

	"github.com/wardenhq/warden/acsstate"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// ProfileProvenance is the ACS-Provenance profile's name in a ClientHello's
// profiles_supported (conformance.md).
const ProfileProvenance = "acs-provenance"

// origins are the values of a Provenance object's origin (provenance.json).
var origins = []string{warden.OriginUserInput, warden.OriginSystem, warden.OriginToolOutput,
	warden.OriginRetrieved, warden.OriginAgentGenerated, warden.OriginA2AInbound, warden.OriginExternal}

// maxDerivedFrom bounds a Provenance object's derived_from list: lineage
// is a few edges, and the list is walked for every step.
const maxDerivedFrom = 256

// checkProvenance validates the Provenance objects of the payload's
// data-bearing fields (catalog.DataFields) against provenance.json:
// provenance an object; provenance_id a non-empty string; origin one of
// the seven origins; source_id a string; derived_from an array of strings
// (at most maxDerivedFrom). In a strict session (one whose ClientHello
// declared acs-provenance: the *.acs-provenance.json variants, ACS §7)
// every data-bearing field that is an object must carry one. The error is
// -32602 naming the field (params.payload.outputs[0].provenance.origin).
func checkProvenance(event string, p map[string]any, strict bool) *Error {
	var e *Error
	catalog.EachDataField(event, p, func(_, dotted string, v any) {
		if e != nil {
			return
		}
		f, ok := v.(map[string]any)
		if !ok {
			return // the payload rules report a field of the wrong type
		}
		at := "params.payload." + dotted + ".provenance"
		pv, has := f["provenance"]
		if !has {
			if strict {
				e = errf(CodeInvalidParams, at, "required: the session declared %s, so every data-bearing field carries provenance", ProfileProvenance)
			}
			return
		}
		e = checkProvenanceObject(pv, at)
	})
	return e
}

// checkProvenanceObject validates one Provenance object found at at.
func checkProvenanceObject(v any, at string) *Error {
	m, ok := v.(map[string]any)
	if !ok {
		return errf(CodeInvalidParams, at, "must be an object (a Provenance: provenance_id, origin, source_id, derived_from)")
	}
	id, has := m["provenance_id"]
	if !has {
		return errf(CodeInvalidParams, at+".provenance_id", "required, a string")
	}
	if s, ok := id.(string); !ok || s == "" {
		return errf(CodeInvalidParams, at+".provenance_id", "must be a non-empty string")
	}
	o, has := m["origin"]
	if !has {
		return errf(CodeInvalidParams, at+".origin", "required, a string")
	}
	os, ok := o.(string)
	if !ok {
		return errf(CodeInvalidParams, at+".origin", "must be a string")
	}
	if !slices.Contains(origins, os) {
		return errf(CodeInvalidParams, at+".origin", "%q is not one of user_input, system, tool_output, retrieved, agent_generated, a2a_inbound, external", clip(os))
	}
	if sid, has := m["source_id"]; has {
		if _, ok := sid.(string); !ok {
			return errf(CodeInvalidParams, at+".source_id", "must be a string")
		}
	}
	if df, has := m["derived_from"]; has {
		items, ok := df.([]any)
		if !ok {
			return errf(CodeInvalidParams, at+".derived_from", "must be an array of provenance_ids (strings)")
		}
		if len(items) > maxDerivedFrom {
			return errf(CodeInvalidParams, at+".derived_from", "has %d entries, more than %d", len(items), maxDerivedFrom)
		}
		for i, it := range items {
			if _, ok := it.(string); !ok {
				return errf(CodeInvalidParams, at+".derived_from["+strconv.Itoa(i)+"]", "must be a string (a provenance_id)")
			}
		}
	}
	return nil
}

// strictProvenance reports whether the session's ClientHello declared
// acs-provenance: its payloads are held to the strict variants.
func strictProvenance(s *acsstate.Session) bool {
	return slices.Contains(s.Profiles, ProfileProvenance)
}
