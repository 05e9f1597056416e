package policy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden"
)

// Options configure an Engine.
type Options struct {
	// Failure says what a run-time evaluation error of an enforce policy means:
	// FailClosed (the zero value) counts it as a deny, FailOpen ignores it.
	Failure warden.FailurePolicy
	// Name is the Guardian field of the engine's results; default "policy".
	Name string
}

// Engine is the policy guardian: a warden.Handler over an atomically
// swappable Set. It is safe for concurrent use.
type Engine struct {
	set    atomic.Pointer[Set]
	opts   Options
	mu     sync.Mutex // guards status
	status ReloadStatus
}

// ReloadStatus says when the set in force was loaded and how the last
// reload went (the console's policies page shows it).
type ReloadStatus struct {
	// Loaded is when the set in force was swapped in (at start-up, or by
	// the last successful reload).
	Loaded time.Time
	// Reloaded is when the last reload was tried (zero: never), and Err
	// why it failed (nil: it succeeded, or there was none).
	Reloaded time.Time
	Err      error
}

// Status returns the engine's ReloadStatus.
func (e *Engine) Status() ReloadStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status
}

var _ warden.Handler = (*Engine)(nil)

// NewEngine returns an engine deciding with set (nil: an empty set).
func NewEngine(set *Set, opts Options) *Engine {
	if opts.Name == "" {
		opts.Name = "policy"
	}
	if set == nil {
		set = newSet(nil, nil)
	}
	e := &Engine{opts: opts}
	e.set.Store(set)
	e.status.Loaded = time.Now()
	return e
}

// Swap replaces the policy set atomically; decisions in flight finish on the
// old one.
func (e *Engine) Swap(s *Set) {
	if s == nil {
		s = newSet(nil, nil)
	}
	e.set.Store(s)
	e.mu.Lock()
	e.status.Loaded = time.Now()
	e.mu.Unlock()
}

// reloaded notes a reload tried at, with its error.
func (e *Engine) reloaded(at time.Time, err error) {
	e.mu.Lock()
	e.status.Reloaded, e.status.Err = at, err
	e.mu.Unlock()
}

// Set returns the current policy set.
func (e *Engine) Set() *Set { return e.set.Load() }

// match is one matching policy during a decision.
type match struct {
	p      *Policy
	res    int    // index in results
	reason string // evaluated reason
	failed bool   // run-time error under FailClosed: counts as a deny
	// covered: the policy asked, but an approver approved its ask for the
	// request this step answers; it counts as an allow (see covered).
	covered bool
}

// covered reports whether p's ask on ev is covered by the approval of the
// request ev answers (warden.Cover): p asked about that request and was
// approved, and p's condition does not read direction (a policy that
// chose the direction it asks about asks again).
func (e *Engine) covered(ev *warden.Event, p *Policy) bool {
	if len(ev.Envelope.Approved) == 0 || (p.when != nil && p.when.direction) {
		return false
	}
	return ev.Envelope.Covered(e.opts.Name, p.ID)
}

// UsesSessionLabels reports whether the set in force may read the session's
// labels deciding an event named event (labels.User).
func (e *Engine) UsesSessionLabels(event string) bool {
	return e.set.Load().UsesSessionLabels(event)
}

// Decide evaluates every policy whose events match ev.Name and combines the
// matches with the Joch rule: any enforce deny → Deny (the first, by priority
// then file order, is reported; ReasonCodes are all enforce denies); else any
// ask → Ask; else the modify policies apply in order to a copy of the payload,
// each seeing the previous result → Modify; else any allow → Allow; else
// Abstain. Audit policies are recorded with the decision they would have made
// and never change the outcome. ev is never mutated.
func (e *Engine) Decide(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
	set := e.set.Load()
	d, err := e.decide(ctx, ev, set)
	d.Revision = set.Revision() // the trace names the set that decided
	return d, err
}

func (e *Engine) decide(ctx context.Context, ev *warden.Event, set *Set) (warden.Decision, error) {
	cands := set.Candidates(ev.Name)
	if len(cands) == 0 {
		return warden.Decision{Verdict: warden.Abstain}, nil
	}
	if ev.LabelsUnread && set.UsesSessionLabels(ev.Name) {
		return warden.Decision{}, labels.ErrUnread
	}
	if err := ctx.Err(); err != nil {
		return warden.Decision{}, err
	}
	act := NewActivation(ev)
	defer act.Release()

	var results []warden.Result // returned in the Decision
	var matchLabels []string    // of the enforce policies that matched
	// The matches stay on the stack unless there are more than a few.
	var dbuf, abuf, mbuf, lbuf [2]match
	denies, asks, modifies, allows := dbuf[:0], abuf[:0], mbuf[:0], lbuf[:0]
	var defers []match
	for _, p := range cands {
		t0 := time.Now()
		ok, err := true, error(nil)
		if p.when != nil {
			ok, err = p.when.evalBool(act)
		}
		if err == nil && !ok {
			continue
		}
		r := warden.Result{Guardian: e.opts.Name, PolicyID: p.ID, PolicyVersion: p.Version,
			Mode: p.Mode.String()}
		m := match{p: p, res: len(results)}
		if err == nil {
			m.reason, err = p.reason(act)
		}
		if err != nil {
			r.Error = err.Error()
			if e.opts.Failure == warden.FailOpen {
				r.Decision = warden.Allow.String()
				r.Reason = fmt.Sprintf("policy %s: evaluation error ignored (failure open)", p.ID)
			} else {
				r.Decision = warden.Deny.String()
				r.Reason = fmt.Sprintf("policy %s: evaluation error: %v", p.ID, err)
				m.reason, m.failed = r.Reason, true
			}
		} else {
			r.Decision, r.Reason = p.Decision.String(), m.reason
			r.Labels = p.Labels
			if p.Decision.Holds() && p.Mode == warden.Enforce && e.covered(ev, p) {
				m.covered = true
				m.reason = fmt.Sprintf("policy %s: %s; not asked again: the approval of the request this answers covers it", p.ID, p.Decision)
				r.Decision, r.Reason = warden.Allow.String(), m.reason
			}
		}
		r.LatencyUS = time.Since(t0).Microseconds()
		results = append(results, r)
		if p.Mode == warden.Audit || (err != nil && !m.failed) {
			continue
		}
		if err == nil && len(p.Labels) > 0 {
			matchLabels = labels.Merge(matchLabels, p.Labels)
		}
		if p.Decision == warden.Abstain && !m.failed {
			continue // it only labels the session
		}
		switch {
		case m.failed || p.Decision == warden.Deny:
			denies = append(denies, m)
		case m.covered:
			allows = append(allows, m)
		case p.Decision == warden.Ask:
			asks = append(asks, m)
		case p.Decision == warden.Defer:
			defers = append(defers, m)
		case p.Decision == warden.Modify:
			modifies = append(modifies, m)
		default:
			allows = append(allows, m)
		}
	}
	// The Joch rule (warden.Stronger) picks the verdict; modifies apply only
	// when nothing stronger matched, and a modify that fails closed is a deny.
	var by [warden.Deny + 1][]match // by verdict; stays on the stack
	by[warden.Deny], by[warden.Defer], by[warden.Ask], by[warden.Modify], by[warden.Allow] = denies, defers, asks, modifies, allows
	top := strongest(&by)
	var payload map[string]any
	if top == warden.Modify {
		payload, by[warden.Modify], by[warden.Allow], by[warden.Deny] = e.modify(ev, act, results, modifies, allows)
		top = strongest(&by)
	}
	if top == warden.Abstain {
		return warden.Decision{Verdict: warden.Abstain, Results: results, Labels: matchLabels}, nil
	}
	d := outcome(top, by[top], results, payload)
	d.Labels = matchLabels
	return d, nil
}

// strongest is the strongest verdict that has matches.
func strongest(by *[warden.Deny + 1][]match) warden.Verdict {
	top := warden.Abstain
	for v, ms := range by {
		if len(ms) > 0 {
			top = warden.Stronger(top, warden.Verdict(v))
		}
	}
	return top
}

// reason evaluates the policy's reason.
func (p *Policy) reason(act *Activation) (string, error) {
	if p.reasonExpr == nil {
		return p.Reason, nil
	}
	return p.reasonExpr.evalString(act)
}

// modify applies the modify policies in order to a copy of the payload. A
// policy whose ops change nothing becomes an allow ("nothing to modify"); one
// whose ops fail is recorded with the error and, failing closed, is a deny.
func (e *Engine) modify(ev *warden.Event, act *Activation, results []warden.Result,
	mods, allows []match) (map[string]any, []match, []match, []match) {
	var cur map[string]any // nil: unchanged so far
	var changed, denies []match
	for _, m := range mods {
		t0 := time.Now()
		base := cur
		if base == nil {
			base = ev.Payload
		}
		work := payload.Clone(base)
		did := false
		var err error
		for i := range m.p.ops {
			var c bool
			work, c, err = m.p.ops[i].apply(work, act)
			if err != nil {
				err = fmt.Errorf("modify[%d]: %w", i, err)
				break
			}
			did = did || c
		}
		r := &results[m.res]
		r.LatencyUS += time.Since(t0).Microseconds()
		switch {
		case err != nil:
			r.Error = err.Error()
			if e.opts.Failure == warden.FailOpen {
				r.Decision = warden.Allow.String()
				r.Reason = fmt.Sprintf("policy %s: evaluation error ignored (failure open)", m.p.ID)
				continue
			}
			r.Decision = warden.Deny.String()
			r.Reason = fmt.Sprintf("policy %s: evaluation error: %v", m.p.ID, err)
			m.reason, m.failed = r.Reason, true
			denies = append(denies, m)
		case !did:
			r.Decision, r.Reason = warden.Allow.String(), "nothing to modify"
			m.reason = r.Reason
			allows = append(allows, m)
		default:
			cur = work
			changed = append(changed, m)
		}
	}
	act.setPayload(nil)
	return cur, changed, sortByRank(allows), denies
}

// sortByRank keeps matches in evaluation order (insertion sort: few items).
func sortByRank(ms []match) []match {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].p.rank < ms[j-1].p.rank; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	return ms
}

// outcome builds the decision reported by the first of ms.
func outcome(v warden.Verdict, ms []match, results []warden.Result, payload map[string]any) warden.Decision {
	d := warden.Decision{Verdict: v, PolicyID: ms[0].p.ID, PolicyVersion: ms[0].p.Version,
		Reason: ms[0].reason, Results: results, Payload: payload}
	d.ReasonCodes = make([]string, len(ms))
	for i, m := range ms {
		d.ReasonCodes[i] = m.p.ID
		if m.covered && !contains(d.ReasonCodes, warden.CodeApprovalCovered) {
			d.ReasonCodes = append(d.ReasonCodes, warden.CodeApprovalCovered)
		}
	}
	if v == warden.Modify && len(ms) > 1 {
		rs := make([]string, 0, len(ms))
		for _, m := range ms {
			if m.reason != "" && !contains(rs, m.reason) {
				rs = append(rs, m.reason)
			}
		}
		d.Reason = strings.Join(rs, "; ")
	}
	return d
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
