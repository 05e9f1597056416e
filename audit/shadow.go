package audit

import "github.com/wardenhq/warden"

// ShadowSummary returns the summary result of the shadow set among
// results (Kind KindShadowSet, Mode ModeShadow), and whether there is one.
func ShadowSummary(results []warden.Result) (warden.Result, bool) {
	for i := len(results) - 1; i >= 0; i-- {
		if r := results[i]; r.Kind == warden.KindShadowSet && r.Mode == warden.ModeShadow {
			return r, true
		}
	}
	return warden.Result{}, false
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
