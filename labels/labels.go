package labels

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Session labels mark what has happened in a session (docs/policies.md): a
// policy's `label:` action and the provenance of the data a step carries
// set them; CEL reads them as session.labels; they outlive the process.
// The labels warden's own mappings and the built-in pack use:
const (
	// ReadPrivate: the session read private data (a file under a
	// home or secret path, a private memory, a mailbox).
	ReadPrivate = "read_private"
	// UntrustedInput: content from a source warden does not trust
	// entered the session (a web page, a tool's output, an external
	// origin in the data's provenance).
	UntrustedInput = "untrusted_input"
	// ExternalSend: the session sent something out (an email, a
	// message, an HTTP POST to another host).
	ExternalSend = "external_send"
)

// MaxLen bounds a label's length, MaxPerSession the labels one
// session keeps: a session that would get more is refused its new labels
// (ErrTooMany), which fails the step closed.
const (
	MaxLen        = 64
	MaxPerSession = 64
)

// ErrTooMany is returned by AddSessionLabels when the session would
// hold more than MaxPerSession labels.
var ErrTooMany = errors.New("warden: too many session labels")

// Valid reports why name cannot be a session label, or nil: a label
// is 1 to MaxLen characters, a lowercase ASCII letter first, then
// lowercase letters, digits, '_', '-' or '.'.
func Valid(name string) error {
	if name == "" {
		return errors.New("a label must not be empty")
	}
	if len(name) > MaxLen {
		return fmt.Errorf("label %.20q… is longer than %d characters", name, MaxLen)
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

// Store keeps the labels of sessions durably, beside the trace. A
// session is named by its tenant ("" for none) and its id, so the same
// session id in two tenants has two label sets. storetest.RunLabels is
// the contract; Rules implements it over a backend's Rows.
type Store interface {
	// SessionLabels returns the session's labels, sorted, or none (an
	// empty or nil slice) for a session that has none.
	SessionLabels(ctx context.Context, tenant, session string) ([]string, error)
	// AddSessionLabels adds labels to the session (those it has already
	// are kept once) at time at, atomically: all or none. It returns the
	// session's labels after the change, sorted. A label that fails
	// Valid is an error; more than MaxPerSession in all is
	// ErrTooMany (nothing is added).
	AddSessionLabels(ctx context.Context, tenant, session string, labels []string, at time.Time) ([]string, error)
}

// Merge returns the sorted union of a and b, without duplicates;
// nil when both are empty. Neither argument is changed.
func Merge(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Missing returns the labels of want that have does not hold
// (have is sorted), sorted and without duplicates; nil when none.
func Missing(have, want []string) []string {
	var out []string
	for _, l := range want {
		if _, ok := slices.BinarySearch(have, l); !ok && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// User is implemented by a Handler (and a Shadow) that can
// tell whether deciding an event named event may read its session's
// labels (Event.SessionLabels). The Decider reads a session's labels only
// for a step some part of whose chain may: a policy set none of whose
// candidate policies mentions session, say. A Handler that does not
// implement it is taken to read them (a hook sees the whole event).
type User interface {
	UsesSessionLabels(event string) bool
}

// ErrUnread is the error of a handler asked to decide an event whose
// session labels were not read (Event.LabelsUnread) although it would read
// them: the Decider's view of the chain was out of date (a policy reload
// between the two), or a replay of a record whose labels were not read.
// The step fails by its failure policy rather than decide on labels it
// does not have.
var ErrUnread = errors.New("the session's labels were not read for this step")
