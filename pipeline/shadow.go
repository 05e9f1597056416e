package pipeline

import (
	"context"

	"github.com/wardenhq/warden"
)

// Shadow decides an event by a candidate policy set after the live chain
// has decided it (live), for the record only. It returns the results to
// append to the event's record, the shadow set's summary last. It must
// not change ev or live, and never fails: what goes wrong is recorded in
// the results.
type Shadow interface {
	Shadow(ctx context.Context, ev *warden.Event, live *warden.Outcome) []warden.Result
}

// SetShadow sets the shadow set every decision is also recorded under (nil:
// none). Shadow results are computed only for a Pipeline with a Store: they
// exist for the trace. Call it before the Pipeline is used.
func (d *Pipeline) SetShadow(s Shadow) { d.shadow = s }
