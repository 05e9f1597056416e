// Package catalog is warden's hook event catalog (docs/hooks.md): every event a
// hook or policy can be declared on, from the three seed sources — the OWASP
// AOS Guardian methods, the AGH hook events and the Standard Agents hooks —
// with its sync eligibility, payload, patch and the fields of each.
//
// The catalog is static data: All returns it in a stable order, Lookup, Find
// and Match query it, and Normalize builds the policy views (tool, message,
// session, ...) of a hook event from its payload so that one policy covers
// the AOS, AGH and Standard Agents spellings of the same step.
package catalog

import (
	"encoding/json"

	"github.com/wardenhq/warden/internal/glob"
)

// Source names the specification an event comes from.
type Source string

// The three sources of the catalog.
const (
	SourceAOS            Source = "aos"             // OWASP AOS Guardian methods (seeds 000, 004)
	SourceAGH            Source = "agh"             // AGH hook events (seed 003)
	SourceStandardAgents Source = "standard-agents" // Standard Agents hooks (seed 002)
)

// Sync labels, as in the seed's Sync column.
const (
	SyncYes       = "yes"
	SyncAsyncOnly = "async only"
)

// Event describes one catalog entry. Entries are values: callers may keep and
// change the copies All, Lookup and Match return without affecting the catalog.
type Event struct {
	// Name is the exact value used in hook and policy declarations, e.g.
	// "tool.pre_call", "steps/toolCallRequest", "filter_messages".
	Name string
	// Family groups related events: for AGH the name up to its first dot
	// ("session", "task", "tool", ...); for AOS "steps", "protocols" or "a2a";
	// for Standard Agents "message-filtering", "message-lifecycle" or
	// "tool-execution".
	Family string
	// Source is the specification defining the event.
	Source Source
	// Sync is true when a declaration may use mode: sync ("yes" in the seed's
	// column) and false when only async declarations are accepted ("async only").
	Sync bool
	// Direction is "outbound" or "inbound" for protocols/MCP, protocols/A2A and
	// the A2A hook methods, which appear once per direction; "" otherwise.
	Direction string
	// Payload is the payload type name from the seed (e.g. "ToolPreCallPayload")
	// or, where the seed names none, a short description.
	Payload string
	// Patch is the patch type name from the seed (e.g. "ToolCallPatch") or,
	// for AOS and Standard Agents, the return value described.
	Patch string
	// PayloadFields lists the payload's top-level fields.
	PayloadFields []string
	// PatchFields lists the fields a patch may set (deny and deny_reason where
	// the event can be denied); empty means an observation-only event.
	PatchFields []string
	// Fires says when the event fires.
	Fires string
}

// SyncLabel returns the seed's Sync column for e: "yes" or "async only".
func (e Event) SyncLabel() string {
	if e.Sync {
		return SyncYes
	}
	return SyncAsyncOnly
}

// Observation reports whether e's patch can change nothing (no PatchFields).
func (e Event) Observation() bool { return len(e.PatchFields) == 0 }

// eventJSON is the wire shape of an Event (CLI -o json and the HTTP API).
type eventJSON struct {
	Name          string   `json:"name"`
	Family        string   `json:"family"`
	Source        Source   `json:"source"`
	Sync          string   `json:"sync"`
	Direction     string   `json:"direction"`
	Payload       string   `json:"payload"`
	Patch         string   `json:"patch"`
	PayloadFields []string `json:"payload_fields"`
	PatchFields   []string `json:"patch_fields"`
	Fires         string   `json:"fires"`
}

// MarshalJSON encodes e with the keys name, family, source, sync ("yes" or
// "async only"), direction, payload, patch, payload_fields, patch_fields and
// fires; the field lists are never null.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{
		Name: e.Name, Family: e.Family, Source: e.Source, Sync: e.SyncLabel(),
		Direction: e.Direction, Payload: e.Payload, Patch: e.Patch,
		PayloadFields: nonNil(e.PayloadFields), PatchFields: nonNil(e.PatchFields), Fires: e.Fires,
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// all is the catalog in its documented order: AOS (steps, protocols, A2A
// hooks), then AGH in the seed's table order, then Standard Agents in the
// seed's table order.
var all = func() []Event {
	var out []Event
	out = append(out, aosEvents()...)
	out = append(out, aghEvents()...)
	out = append(out, standardAgentsEvents()...)
	return append(out, acsEvents()...)
}()

// All returns every catalog entry in a stable order: the AOS methods first
// (the seven steps/* methods in spec order, protocols/MCP and protocols/A2A
// outbound then inbound, then each A2A hook method outbound then inbound),
// then the 52 AGH events in the order of seed 003's tables, then the nine
// Standard Agents hooks in the order of seed 002's table. The slice and its
// field lists are fresh copies.
func All() []Event {
	out := make([]Event, len(all))
	for i, e := range all {
		out[i] = e.clone()
	}
	return out
}

func (e Event) clone() Event {
	e.PayloadFields = append([]string(nil), e.PayloadFields...)
	e.PatchFields = append([]string(nil), e.PatchFields...)
	return e
}

// Lookup returns the first entry named name (for protocols/MCP, protocols/A2A
// and the A2A hook methods, the outbound one).
func Lookup(name string) (Event, bool) {
	for _, e := range all {
		if e.Name == name {
			return e.clone(), true
		}
	}
	return Event{}, false
}

// Find returns the entry named name with the given direction; direction ""
// matches any, like Lookup.
func Find(name, direction string) (Event, bool) {
	for _, e := range all {
		if e.Name == name && (direction == "" || e.Direction == direction) {
			return e.clone(), true
		}
	}
	return Event{}, false
}

// Known reports whether name (an exact name, not a glob) is in the catalog.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Match returns the entries whose name matches pattern, in catalog order. A
// pattern is a name or a glob where * matches any run of characters
// (including "/" and ".") and ? one character — the semantics of policy.Glob.
func Match(pattern string) []Event {
	var out []Event
	for _, e := range all {
		if Glob(pattern, e.Name) {
			out = append(out, e.clone())
		}
	}
	return out
}

// Select returns the entries of family (every family when "") that are
// sync-eligible when syncOnly is set, in catalog order; never nil.
func Select(family string, syncOnly bool) []Event {
	out := []Event{}
	for _, e := range all {
		if (family == "" || e.Family == family) && (!syncOnly || e.Sync) {
			out = append(out, e.clone())
		}
	}
	return out
}

// Families returns the family names in order of first appearance.
func Families() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range all {
		if !seen[e.Family] {
			seen[e.Family] = true
			out = append(out, e.Family)
		}
	}
	return out
}

// Glob is warden.Glob: * matches any run of characters, ? exactly one.
func Glob(pattern, s string) bool { return glob.Match(pattern, s) }

// Names returns every event name a policy or hook may be declared on: the
// catalog's (once each), then the other A2A methods the A2A proxy governs
// (A2AMethods). Declarations are checked against it.
func Names() []string {
	seen := make(map[string]bool, len(all)+len(A2AMethods))
	var names []string
	for _, e := range all {
		if !seen[e.Name] {
			seen[e.Name] = true
			names = append(names, e.Name)
		}
	}
	for _, m := range A2AMethods {
		if !seen[m] {
			seen[m] = true
			names = append(names, m)
		}
	}
	return names
}
