package warden

import "context"

// A shadow set is a candidate policy set that decides every event beside
// the live one and is never applied (CONTRACT §13, `serve
// --shadow-policy`): after the live chain has decided, the Decider asks
// its Shadow, and appends what that returns to the record's results —
// only the record's: the Outcome a surface answers from never holds them.
// The results are marked with ModeShadow; the last of them is the shadow
// set's summary (KindShadowSet), whose Decision is the verdict the
// candidate set would have given.
const (
	// ModeShadow is the Mode of every result of a shadow set.
	ModeShadow = "shadow"
	// GuardianShadow is the Guardian of every result of a shadow set.
	GuardianShadow = "shadow"
	// KindShadowSet is the Kind of a shadow set's summary result: its
	// combined verdict (Decision), the policy that decided it (PolicyID,
	// PolicyVersion; none when its default applied), the set's revision
	// (PolicyRevision) and, when the shadow set could not decide, Error.
	KindShadowSet = "shadow_set"
)

// Shadow decides an event by a candidate policy set after the live chain
// has decided it (live), for the record only. It returns the results to
// append to the event's record, the shadow set's summary last. It must
// not change ev or live, and never fails: what goes wrong is recorded in
// the results.
type Shadow interface {
	Shadow(ctx context.Context, ev *Event, live *Outcome) []Result
}

// SetShadow sets the shadow set every decision is also recorded under (nil:
// none). Shadow results are computed only for a Decider with a Store: they
// exist for the trace. Call it before the Decider is used.
func (d *Decider) SetShadow(s Shadow) { d.shadow = s }

// ShadowSummary returns the summary result of the shadow set among
// results (Kind KindShadowSet, Mode ModeShadow), and whether there is one.
func ShadowSummary(results []Result) (Result, bool) {
	for i := len(results) - 1; i >= 0; i-- {
		if r := results[i]; r.Kind == KindShadowSet && r.Mode == ModeShadow {
			return r, true
		}
	}
	return Result{}, false
}

// ShadowDecision is the verdict the shadow set would have given r's step
// (its summary's Decision); "" when r was not decided beside a shadow set.
func (r *Record) ShadowDecision() string {
	s, _ := ShadowSummary(r.Results)
	return s.Decision
}

// ShadowDisagrees reports whether r was decided beside a shadow set whose
// verdict differs from the decision recorded (Query.ShadowDisagrees).
func (r *Record) ShadowDisagrees() bool {
	s := r.ShadowDecision()
	return s != "" && s != r.Decision
}
