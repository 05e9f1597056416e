package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
)

// newRecord is the record stage: the decision's trace record, which the
// outcome names.
func (p *Pipeline) newRecord(_ context.Context, d *decision) {
	d.rec = audit.NewRecord(d.ev, &d.out, time.Now())
	d.out.RecordID = d.rec.ID
}

// recordResults appends rs to the record's results only: the outcome
// answered never holds them (a full slice expression, so the outcome's
// Results, which the record's share, are not written).
func (d *decision) recordResults(rs ...warden.Result) {
	have := d.rec.Results
	d.rec.Results = append(have[:len(have):len(have)], rs...)
}

// filterRecord is the filter stage: the record filter (redaction, and the
// sealing of what it replaced) changes the record before it is stored. A
// record the filter fails on is not stored: the outcome becomes the deny a
// failed store gives (trace_unavailable).
func (p *Pipeline) filterRecord(ctx context.Context, d *decision) {
	if err := p.filter(ctx, d.rec); err != nil {
		d.unrecorded(err)
	}
}

// storeRecord is the store stage: the record is stored before the step is
// answered. A step that was decided is recorded even if its caller went
// away meanwhile (an audit trail of attempts), within a bounded wait. A
// record that cannot be stored turns the outcome into a deny (reason code
// trace_unavailable), which no record names.
func (p *Pipeline) storeRecord(ctx context.Context, d *decision) {
	if d.err != nil {
		return // the filter failed: not recorded
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	err := p.store.Record(rctx, d.rec)
	cancel()
	if err != nil {
		d.unrecorded(err)
		return
	}
	d.stored = d.rec
}

// unrecorded turns the outcome into the deny of a decision that could not
// be recorded (reason code trace_unavailable), which no record names.
func (d *decision) unrecorded(err error) {
	d.err = fmt.Errorf("%w: %v", audit.ErrUnavailable, err)
	d.out = warden.Outcome{
		Verdict: warden.Deny, Reason: "decision not recorded: " + d.err.Error(),
		ReasonCodes: []string{warden.CodeTraceUnavailable}, Results: d.out.Results, Latency: d.out.Latency,
		// No RecordID: this decision is not in the trace.
	}
}
