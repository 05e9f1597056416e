// Package warden holds the vocabulary every other package speaks: the
// Event a surface builds from what it received, the Verdict, Decision and
// Result a guardian gives, the Outcome of a whole Chain of steps, the
// Principal who asked, and the reason codes the core writes. It does no
// I/O of its own. Entry points (the AOS and ACS endpoints, the gateways,
// hook dispatch, the CLI) turn what they receive into an Event, hand it to
// a Core (package pipeline runs one decision; package guardian one
// pipeline per tenant), and map the Outcome back to their wire format.
// docs/architecture.md draws the packages and the decision path.
package warden

import (
	"context"
	"fmt"
)

// Verdict is what a guardian or policy decided about an event. The zero value,
// Abstain, means "no opinion": nothing matched.
type Verdict uint8

// Verdicts, in the order of their precedence when combined (see Stronger).
const (
	Abstain Verdict = iota
	Allow
	Modify
	Ask
	// Defer asks the caller to hold the step until it is resolved (the ACS
	// standard's fifth disposition): a policy's decision: defer. Like Ask it
	// opens an approval; surfaces that hold calls hold it, ACS answers it
	// as defer with defer_details.
	Defer
	Deny
)

var verdictNames = [...]string{"", "allow", "modify", "ask", "defer", "deny"}

// Stronger returns the verdict that wins when v and w are combined: the Joch
// rule in one place. Deny beats everything; then defer, ask, modify, allow;
// Abstain (no opinion) loses to any verdict. The chain and the policy engine
// both combine with it.
func Stronger(v, w Verdict) Verdict {
	if w > v {
		return w
	}
	return v
}

// Holds reports whether v holds the step for someone else to decide (Ask,
// Defer): the step is neither taken nor refused yet.
func (v Verdict) Holds() bool { return v == Ask || v == Defer }

// String returns the wire name of v ("allow", "deny", "modify", "ask",
// "defer"; "" for Abstain).
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// ParseVerdict parses a decision a policy or config may name: allow, deny,
// modify or ask. The empty string is not a verdict; defer is not one a
// policy can take yet.
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if i > 0 && Verdict(i) != Defer && n == s {
			return Verdict(i), nil
		}
	}
	return Abstain, fmt.Errorf("unknown decision %q (want allow, deny, modify or ask)", s)
}

// ParseRecorded parses a decision as the trace records it: allow, deny,
// modify, ask or defer (a held step is recorded as held, whatever its
// surface answered).
func ParseRecorded(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if i > 0 && n == s {
			return Verdict(i), nil
		}
	}
	return Abstain, fmt.Errorf("unknown decision %q (want allow, deny, modify, ask or defer)", s)
}

// Mode says whether a policy or guardian's verdict is applied (Enforce) or only
// recorded (Audit).
type Mode uint8

// Modes. The zero value is Enforce.
const (
	Enforce Mode = iota
	Audit
)

// String returns "enforce" or "audit".
func (m Mode) String() string {
	if m == Audit {
		return "audit"
	}
	return "enforce"
}

// FailurePolicy says what a guardian's error means: FailClosed turns it into a
// deny, FailOpen skips the guardian. The zero value is FailClosed.
type FailurePolicy uint8

// Failure policies.
const (
	FailClosed FailurePolicy = iota
	FailOpen
)

// String returns "closed" or "open".
func (f FailurePolicy) String() string {
	if f == FailOpen {
		return "open"
	}
	return "closed"
}

// Surfaces an event can arrive on.
const (
	SurfaceAOS   = "aos"
	SurfaceMCP   = "mcp"
	SurfaceA2A   = "a2a"
	SurfaceHooks = "hooks"
	SurfaceSDK   = "sdk"
	SurfaceACS   = "acs"
	// SurfaceApproval marks the trace record of an approval's own decision
	// (approved, denied, expired): not a step an agent took.
	SurfaceApproval = "approval"
)

// Directions of protocol messages. Step events have no direction ("").
const (
	Outbound = "outbound"
	Inbound  = "inbound"
)

// Core is what every surface needs of the decision core: one decision,
// views built, chain run, outcome recorded (the Decider; the guardian
// package's Guardian).
type Core interface {
	Decide(ctx context.Context, ev *Event) (Outcome, error)
}

// Upstream is a server a gateway forwards to, as the config names it.
// Headers are ${VAR}-expanded; they hold secrets: never log them.
type Upstream struct {
	Name    string
	URL     string
	Headers map[string]string
}
