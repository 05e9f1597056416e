package replay

import (
	"context"
	"errors"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/hooks"
)

// modeShadow marks the results of a shadow policy set (serve
// --shadow-policy): recorded beside the live chain, never part of it, so
// replay ignores them.
const modeShadow = warden.ModeShadow

// isPolicy reports whether r is a result of the policy step: one per
// matching policy (Kind empty: the engine's own results), or the step's
// single result when no policy matched or it failed (Kind policy).
func isPolicy(r *warden.Result) bool { return r.Kind == "" || r.Kind == hooks.KindPolicy }

// steps returns the chain rec was decided by, in the order its results were
// recorded: each run of policy results is the policy step, decided again by
// engine; each other result (a command, webhook or remote-guardian hook) is
// a step that answers what the hook answered live, without running it.
// Shadow results, and the result listing the session labels the step
// added (warden.KindLabels), are left out. A step that recorded no result did not run
// live (a hook whose `when` was false, or one after a deny) and is not
// replayed.
func steps(rec *audit.Record, engine warden.Handler) []warden.Step {
	out := make([]warden.Step, 0, 2)
	inPolicy := false
	for i := range rec.Results {
		r := &rec.Results[i]
		if r.Mode == modeShadow || r.Kind == warden.KindLabels {
			continue // beside the chain: a shadow set's, the labels the step added
		}
		if !isPolicy(r) {
			inPolicy = false
			out = append(out, hookStep(*r))
			continue
		}
		if inPolicy {
			continue // the same step's next policy
		}
		inPolicy = true
		if r.Kind == hooks.KindPolicy && r.PolicyID == "" && r.Error != "" {
			// The step itself failed live (its declaration's `when`, or
			// the engine): that is recorded, not decided again.
			out = append(out, hookStep(*r))
			continue
		}
		name := r.Guardian
		if r.Kind == "" {
			name = "policy"
		}
		out = append(out, warden.Step{Name: name, Kind: hooks.KindPolicy, Handler: engine})
	}
	return out
}

// hookStep is the step of one recorded hook result. Its failure policy is
// the one the result shows: a failed step recorded as allow failed open.
func hookStep(r warden.Result) warden.Step {
	st := warden.Step{Name: r.Guardian, Kind: r.Kind, Handler: &recorded{r}}
	if r.Error != "" && r.Decision == warden.Allow.String() {
		st.Failure = warden.FailOpen
	}
	if r.Mode == warden.Audit.String() {
		st.Mode = warden.Audit
	}
	return st
}

// recorded answers as one hook answered live, from its recorded result.
type recorded struct{ res warden.Result }

var _ warden.Handler = (*recorded)(nil)

// Decide returns the recorded answer: the recorded error; for a command or
// webhook hook, its recorded patch applied to ev's payload as the live
// chain applies it (hooks.ApplyPatch: the payload may differ from live when
// an earlier step now changes it differently); for any other kind (a remote
// AOS guardian) the recorded decision. A remote guardian's changed payload
// is not in the record: its modify keeps the payload as it is.
func (h *recorded) Decide(_ context.Context, ev *warden.Event) (warden.Decision, error) {
	r := h.res
	if r.Error != "" {
		return warden.Decision{}, errors.New(r.Error)
	}
	r.Refused = "" // the chain's guard decides again
	if r.Kind == hooks.KindCommand || r.Kind == hooks.KindWebhook {
		d, err := hooks.ApplyPatch(ev, r.Patch)
		if err != nil {
			return d, err
		}
		r.Decision, r.Reason = d.Verdict.String(), d.Reason
		d.Results = []warden.Result{r}
		return d, nil
	}
	v, err := warden.ParseRecorded(r.Decision)
	if err != nil {
		v = warden.Abstain // "": the hook had no opinion
	}
	d := warden.Decision{Verdict: v, Reason: r.Reason, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
		Results: []warden.Result{r}}
	if v == warden.Modify {
		d.Payload = ev.Payload
	}
	return d, nil
}
