// Package warden holds the domain types of the warden Guardian: events, decisions,
// the guardian chain that composes them, and the trace store interface. It does no
// I/O of its own; entry points (the AOS endpoint, gateways, hook dispatch, the CLI)
// turn what they receive into an Event, hand it to one Chain, and map the Outcome
// back to their wire format.
package warden

import (
	"errors"
	"fmt"
)

// Verdict is what a guardian or policy decided about an event. The zero value,
// Abstain, means "no opinion": nothing matched.
type Verdict uint8

// Verdicts, in the order of their strength when combined (any Deny wins).
const (
	Abstain Verdict = iota
	Allow
	Modify
	Ask
	Deny
)

var verdictNames = [...]string{"", "allow", "modify", "ask", "deny"}

// String returns the wire name of v ("allow", "deny", "modify", "ask"; "" for Abstain).
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// ParseVerdict parses a wire name. The empty string is not a verdict.
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if i > 0 && n == s {
			return Verdict(i), nil
		}
	}
	return Abstain, fmt.Errorf("unknown decision %q (want allow, deny, modify or ask)", s)
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
)

// Directions of protocol messages. Step events have no direction ("").
const (
	Outbound = "outbound"
	Inbound  = "inbound"
)

// Reason codes the chain itself produces (policy ids are the other reason codes).
const (
	CodeApprovalRequired = "approval_required"
	CodeGuardianError    = "guardian_error"
	CodeTraceUnavailable = "trace_unavailable"
	CodeDefault          = "default_decision"
)

// ErrTraceUnavailable wraps store failures: the decision could not be recorded,
// so it is not given (fail closed).
var ErrTraceUnavailable = errors.New("trace store unavailable")
