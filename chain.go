package warden

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/labels"
)

// Handler decides about events. An error means the handler could not decide —
// never "deny"; the chain applies the step's FailurePolicy to it.
type Handler interface {
	Decide(ctx context.Context, ev *Event) (Decision, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, ev *Event) (Decision, error)

// Decide calls f.
func (f HandlerFunc) Decide(ctx context.Context, ev *Event) (Decision, error) { return f(ctx, ev) }

// Step is one guardian in a chain.
type Step struct {
	Name    string
	Kind    string // handler kind, for the trace (policy, command, webhook, aos)
	Handler Handler
	Mode    Mode
	Failure FailurePolicy
	Timeout time.Duration // 0: no deadline beyond the caller's
	// When, if set, decides whether the step runs for an event (a hook's
	// CEL condition); an error is the step's error.
	When func(ctx context.Context, ev *Event) (bool, error)
}

// Guard checks a step's changed payload before the chain applies it; an
// error refuses the change (recorded on the step's results, the previous
// payload stays). Hook chains use it for the escalation rules.
type Guard func(ev *Event, next map[string]any) error

// Chain composes guardians with the Joch rule (see Stronger): steps run in
// order, each seeing the payload the previous steps produced; the first deny
// stops the chain; an ask (or defer) holds the step, but the later steps
// still run so that a deny after it wins and modifies after it shape what
// would be taken; modifies apply in order; audit steps are recorded but
// never change the outcome; if no step decides, the default verdict
// applies. Composition lives here and nowhere else.
type Chain struct {
	steps []Step
	def   Verdict
	guard Guard
}

// NewChain returns a chain of steps with default verdict def (Allow or Deny;
// Abstain means Allow).
func NewChain(def Verdict, steps ...Step) *Chain {
	if def == Abstain {
		def = Allow
	}
	return &Chain{steps: steps, def: def}
}

// WithGuard sets the chain's guard and returns the chain.
func (c *Chain) WithGuard(g Guard) *Chain {
	c.guard = g
	return c
}

// Steps returns the chain's steps in run order.
func (c *Chain) Steps() []Step { return c.steps }

// Run runs the chain for ev. It returns Allow, Deny, Modify, Ask or
// Defer, and never fails: guardian errors are folded in by failure policy.
func (c *Chain) Run(ctx context.Context, ev *Event) Outcome {
	start := time.Now()
	var out Outcome
	cur := ev
	modified := false
	decided := false
	var held Decision // the strongest ask or defer so far
	for i := range c.steps {
		st := &c.steps[i]
		if st.When != nil {
			ok, err := st.When(ctx, cur)
			if err == nil && !ok {
				continue
			}
			if err != nil {
				err = fmt.Errorf("when: %w", err)
				out.Results = append(out.Results, Result{Guardian: st.Name, Kind: st.Kind,
					Decision: failVerdict(st.Failure).String(), Mode: st.Mode.String(), Error: err.Error()})
				if st.Failure == FailOpen || st.Mode == Audit {
					continue
				}
				out.Verdict, out.ReasonCodes = Deny, []string{CodeGuardianError}
				out.Reason = fmt.Sprintf("guardian %s failed: %v", st.Name, err)
				out.Latency = time.Since(start)
				return out
			}
		}
		d, lat, err := runStep(ctx, st, cur)
		mark := len(out.Results)
		if err != nil {
			out.Results = append(out.Results, Result{
				Guardian: st.Name, Kind: st.Kind, Decision: failVerdict(st.Failure).String(), Mode: st.Mode.String(),
				LatencyUS: lat.Microseconds(), Error: err.Error(),
			})
			if st.Failure == FailOpen || st.Mode == Audit {
				continue
			}
			d = Decision{Verdict: Deny, Reason: fmt.Sprintf("guardian %s failed: %v", st.Name, err),
				ReasonCodes: []string{CodeGuardianError}}
		} else {
			out.Results = append(out.Results, stepResults(st, d, lat)...)
		}
		if err == nil && d.Verdict == Modify && c.guard != nil && st.Mode != Audit {
			if gerr := c.guard(cur, d.Payload); gerr != nil {
				for i := mark; i < len(out.Results); i++ {
					out.Results[i].Refused = gerr.Error()
				}
				continue // the change is not applied; the step has no say
			}
		}
		if out.PolicyRevision == "" {
			out.PolicyRevision = d.Revision
		}
		if st.Mode == Audit {
			continue
		}
		if d.Verdict.Holds() && len(d.Results) == 0 && ev.Envelope.Covered(st.Name, d.PolicyID) {
			// A hook that asked about the request this step answers, and
			// was approved: it does not ask again (Cover). A policy
			// engine's results say for themselves which policy asked.
			d.Verdict, d.ReasonCodes = Allow, append([]string{CodeApprovalCovered}, d.ReasonCodes...)
			d.Reason = fmt.Sprintf("%s: %s; not asked again: the approval of the request this answers covers it", st.Name, d.Reason)
			r := &out.Results[len(out.Results)-1]
			r.Decision, r.Reason = Allow.String(), d.Reason
		}
		if len(d.Labels) > 0 {
			out.Labels = labels.Merge(out.Labels, d.Labels)
		}
		switch d.Verdict {
		case Deny:
			out.Verdict = Deny
			out.Reason = d.Reason
			out.PolicyID, out.PolicyVersion = d.PolicyID, d.PolicyVersion
			out.ReasonCodes = d.ReasonCodes
			if out.Reason == "" {
				out.Reason = "denied by " + st.Name
				if d.PolicyID != "" {
					out.Reason += " policy " + d.PolicyID
				}
			}
			out.Payload = nil
			out.Latency = time.Since(start)
			return out
		case Ask, Defer:
			if Stronger(held.Verdict, d.Verdict) != held.Verdict {
				held = d
				if held.Reason == "" {
					held.Reason = d.Verdict.String() + " by " + st.Name
				}
			}
		case Modify:
			decided, modified = true, true
			out.ReasonCodes = append(out.ReasonCodes, d.ReasonCodes...)
			if out.PolicyID == "" {
				out.PolicyID, out.PolicyVersion = d.PolicyID, d.PolicyVersion
			}
			out.Reason = joinReason(out.Reason, d.Reason)
			if d.Payload != nil {
				cur = cur.WithPayload(d.Payload)
			}
		case Allow:
			decided = true
			if !modified && out.PolicyID == "" {
				out.PolicyID, out.PolicyVersion = d.PolicyID, d.PolicyVersion
				out.Reason = d.Reason
				out.ReasonCodes = d.ReasonCodes
			}
		}
	}
	switch {
	case held.Verdict != Abstain:
		out.Verdict = held.Verdict
		out.Reason, out.ReasonCodes = held.Reason, held.ReasonCodes
		out.PolicyID, out.PolicyVersion = held.PolicyID, held.PolicyVersion
		out.Payload = nil
		if modified {
			out.Payload = cur.Payload
		}
	case modified:
		out.Verdict = Modify
		out.Payload = cur.Payload
	case decided:
		out.Verdict = Allow
	default:
		out.Verdict = c.def
		out.ReasonCodes = []string{CodeDefault}
		out.Reason = "no policy matched; default decision " + c.def.String()
	}
	out.Latency = time.Since(start)
	return out
}

func runStep(ctx context.Context, st *Step, ev *Event) (d Decision, lat time.Duration, err error) {
	t0 := time.Now()
	if st.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, st.Timeout)
		defer cancel()
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		d, err = st.Handler.Decide(ctx, ev)
	}()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) && st.Timeout > 0 {
		err = fmt.Errorf("timed out after %s", st.Timeout)
	}
	if err == nil && d.Verdict == Modify && d.Payload == nil {
		err = fmt.Errorf("modify decision without a payload")
	}
	return d, time.Since(t0), err
}

func stepResults(st *Step, d Decision, lat time.Duration) []Result {
	if len(d.Results) > 0 {
		if st.Mode == Audit {
			rs := make([]Result, len(d.Results))
			for i, r := range d.Results {
				r.Mode = Audit.String()
				rs[i] = r
			}
			return rs
		}
		return d.Results
	}
	return []Result{{
		Guardian: st.Name, Kind: st.Kind, PolicyID: d.PolicyID, PolicyVersion: d.PolicyVersion,
		Decision: d.Verdict.String(), Mode: st.Mode.String(), Reason: d.Reason,
		LatencyUS: lat.Microseconds(),
	}}
}

func failVerdict(f FailurePolicy) Verdict {
	if f == FailOpen {
		return Allow
	}
	return Deny
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return a + "; " + b
}

// UsesSessionLabels reports whether deciding an event named event may read
// its session's labels: whether a step has a condition (When) or a
// handler that does not say (labels.User), or one that says it does.
func (c *Chain) UsesSessionLabels(event string) bool {
	for i := range c.steps {
		st := &c.steps[i]
		if st.When != nil {
			return true
		}
		u, ok := st.Handler.(interface{ UsesSessionLabels(event string) bool })
		if !ok || u.UsesSessionLabels(event) {
			return true
		}
	}
	return false
}
