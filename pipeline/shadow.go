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

// runShadow is the shadow stage: the shadow set decides the event beside
// the live chain (before an approval changes the live outcome), and its
// results join the record. Shadow results exist for the trace: a Pipeline
// without a Store has no shadow stage.
func (p *Pipeline) runShadow(ctx context.Context, d *decision) {
	d.recordResults(p.shadow.Shadow(ctx, d.ev, &d.out)...)
}
