package guardian

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/policy"
)

// shadowSet is a policy set's shadow set (Options.Shadow): a candidate
// policy set that decides every recorded event beside the live one, for
// the record only (pipeline.Shadow). It decides as the live policy step
// does — a chain of one policy step with the set's default decision — and
// folds in the live verdicts of the other guardians (command, webhook and
// remote-guardian hooks), which it does not run again.
type shadowSet struct {
	engine *policy.Engine
	chain  *warden.Chain
	log    *slog.Logger
}

var _ pipeline.Shadow = (*shadowSet)(nil)

// newShadow compiles the shadow set spec selects, deciding with default
// verdict def when nothing matches.
func newShadow(spec policy.Spec, def warden.Verdict, log *slog.Logger) (*shadowSet, error) {
	spec.Events = catalog.Names()
	ps, err := policy.LoadSet(spec)
	if err != nil {
		return nil, fmt.Errorf("shadow set: %w", err)
	}
	e := policy.NewEngine(ps, policy.Options{Name: warden.GuardianShadow})
	return &shadowSet{
		engine: e,
		chain:  warden.NewChain(def, warden.Step{Name: warden.GuardianShadow, Kind: hooks.KindPolicy, Handler: e}),
		log:    log,
	}, nil
}

// UsesSessionLabels reports whether the shadow set may read the session's
// labels deciding an event named event (labels.User).
func (s *shadowSet) UsesSessionLabels(event string) bool {
	return s.chain.UsesSessionLabels(event)
}

// Shadow decides ev by the shadow set: one result per matching shadow
// policy, marked shadow, then the summary (warden.KindShadowSet) with the
// verdict the candidate set would have given. An error of the shadow set
// (a panic, a cancelled context) is logged at WARN and recorded in the
// summary's Error; the live outcome is never touched.
func (s *shadowSet) Shadow(ctx context.Context, ev *warden.Event, live *warden.Outcome) []warden.Result {
	t0 := time.Now()
	out := s.chain.Run(ctx, ev)
	sum := warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Mode: warden.ModeShadow,
		PolicyRevision: out.PolicyRevision}
	if sum.PolicyRevision == "" {
		sum.PolicyRevision = s.engine.Set().Revision()
	}
	rs := make([]warden.Result, 0, len(out.Results)+1)
	for _, r := range out.Results {
		if r.Kind == hooks.KindPolicy { // the step's own result: no match, or the engine failed
			sum.Error = r.Error
			continue
		}
		r.Mode = warden.ModeShadow
		rs = append(rs, r)
	}
	v, reason := out.Verdict, out.Reason
	sum.PolicyID, sum.PolicyVersion = out.PolicyID, out.PolicyVersion
	if len(out.ReasonCodes) == 1 && out.ReasonCodes[0] == warden.CodeDefault {
		v = warden.Abstain // the default applies only if no live hook decided either
	}
	for _, r := range live.Results {
		hv, ok := hookVerdict(r)
		if !ok || warden.Stronger(v, hv) == v {
			continue
		}
		v, reason = hv, fmt.Sprintf("hook %s decided %s (its live result, not run again)", r.Guardian, hv)
		if r.Reason != "" {
			reason += ": " + r.Reason
		}
		sum.PolicyID, sum.PolicyVersion = "", ""
	}
	if v == warden.Abstain {
		v = out.Verdict
	}
	sum.Decision, sum.Reason = v.String(), reason
	sum.LatencyUS = time.Since(t0).Microseconds()
	if sum.Error != "" {
		s.log.Warn("the shadow set could not decide; the live decision stands",
			"event", ev.Name, "record_decision", live.Verdict.String(), "err", sum.Error)
	}
	return append(rs, sum)
}

// hookVerdict is the verdict a live result of a hook other than the policy
// engine (command, webhook, remote guardian) had in the live outcome, and
// whether it had a say: an enforcing hook whose change was not refused and
// that did not fail open.
func hookVerdict(r warden.Result) (warden.Verdict, bool) {
	if r.Kind == "" || r.Kind == hooks.KindPolicy || r.Mode != warden.Enforce.String() || r.Refused != "" {
		return warden.Abstain, false
	}
	v, err := warden.ParseRecorded(r.Decision)
	if err != nil || (r.Error != "" && v == warden.Allow) {
		return warden.Abstain, false
	}
	return v, true
}
