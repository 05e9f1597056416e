package warden

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Session labels mark what has happened in a session (CONTRACT §15): a
// policy's `label:` action and the provenance of the data a step carries
// set them; CEL reads them as session.labels; they outlive the process.
// The labels warden's own mappings and the built-in pack use:
const (
	// LabelReadPrivate: the session read private data (a file under a
	// home or secret path, a private memory, a mailbox).
	LabelReadPrivate = "read_private"
	// LabelUntrustedInput: content from a source warden does not trust
	// entered the session (a web page, a tool's output, an external
	// origin in the data's provenance).
	LabelUntrustedInput = "untrusted_input"
	// LabelExternalSend: the session sent something out (an email, a
	// message, an HTTP POST to another host).
	LabelExternalSend = "external_send"
)

// MaxLabelLen bounds a label's length, MaxSessionLabels the labels one
// session keeps: a session that would get more is refused its new labels
// (ErrTooManyLabels), which fails the step closed.
const (
	MaxLabelLen      = 64
	MaxSessionLabels = 64
)

// ErrTooManyLabels is returned by AddSessionLabels when the session would
// hold more than MaxSessionLabels labels.
var ErrTooManyLabels = errors.New("warden: too many session labels")

// ValidLabel reports why name cannot be a session label, or nil: a label
// is 1 to MaxLabelLen characters, a lowercase ASCII letter first, then
// lowercase letters, digits, '_', '-' or '.'.
func ValidLabel(name string) error {
	if name == "" {
		return errors.New("a label must not be empty")
	}
	if len(name) > MaxLabelLen {
		return fmt.Errorf("label %.20q… is longer than %d characters", name, MaxLabelLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'):
		default:
			return fmt.Errorf("label %q: a label is a lowercase letter, then lowercase letters, digits, '_', '-' or '.'", name)
		}
	}
	return nil
}

// LabelStore keeps the labels of sessions durably, beside the trace. A
// session is named by its tenant ("" for none) and its id, so the same
// session id in two tenants has two label sets. storetest.RunLabels is
// the contract.
type LabelStore interface {
	// SessionLabels returns the session's labels, sorted, or none (an
	// empty or nil slice) for a session that has none.
	SessionLabels(ctx context.Context, tenant, session string) ([]string, error)
	// AddSessionLabels adds labels to the session (those it has already
	// are kept once) at time at, atomically: all or none. It returns the
	// session's labels after the change, sorted. A label that fails
	// ValidLabel is an error; more than MaxSessionLabels in all is
	// ErrTooManyLabels (nothing is added).
	AddSessionLabels(ctx context.Context, tenant, session string, labels []string, at time.Time) ([]string, error)
}

// MergeLabels returns the sorted union of a and b, without duplicates;
// nil when both are empty. Neither argument is changed.
func MergeLabels(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// missingLabels returns the labels of want that have does not hold
// (have is sorted), sorted and without duplicates; nil when none.
func missingLabels(have, want []string) []string {
	var out []string
	for _, l := range want {
		if _, ok := slices.BinarySearch(have, l); !ok && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// Provenance is one ACS Provenance object (ACS §7) found on a data-bearing
// field of an event's payload: the provenance view policies read as
// `provenance` (a list, in payload order).
type Provenance struct {
	// Field is where the object sits, as a JSON Pointer into the payload
	// (e.g. /outputs/0/provenance).
	Field       string
	ID          string   // provenance_id
	Origin      string   // origin: user_input, system, tool_output, ...
	SourceID    string   // source_id ("" when absent)
	DerivedFrom []string // derived_from (nil when absent)
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
			return []string{LabelUntrustedInput}
		}
	}
	return nil
}

// SessionLabelUser is implemented by a Handler (and a Shadow) that can
// tell whether deciding an event named event may read its session's
// labels (Event.SessionLabels). The Decider reads a session's labels only
// for a step some part of whose chain may: a policy set none of whose
// candidate policies mentions session, say. A Handler that does not
// implement it is taken to read them (a hook sees the whole event).
type SessionLabelUser interface {
	UsesSessionLabels(event string) bool
}

// ErrLabelsUnread is the error of a handler asked to decide an event whose
// session labels were not read (Event.LabelsUnread) although it would read
// them: the Decider's view of the chain was out of date (a policy reload
// between the two), or a replay of a record whose labels were not read.
// The step fails by its failure policy rather than decide on labels it
// does not have.
var ErrLabelsUnread = errors.New("the session's labels were not read for this step")

// UsesSessionLabels reports whether deciding an event named event may read
// its session's labels: whether a step has a condition (When) or a
// handler that is not a SessionLabelUser, or one that says it does.
func (c *Chain) UsesSessionLabels(event string) bool {
	for i := range c.steps {
		st := &c.steps[i]
		if st.When != nil {
			return true
		}
		u, ok := st.Handler.(SessionLabelUser)
		if !ok || u.UsesSessionLabels(event) {
			return true
		}
	}
	return false
}
