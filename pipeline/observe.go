package pipeline

import (
	"context"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
)

// Observer is told of every decision (metrics); it must not block.
type Observer interface {
	Observe(ev *warden.Event, out *warden.Outcome, recordErr error)
}

// RecordObserver is an Observer that is also given the decision's context
// (the caller's, carrying its trace context) and the record as stored —
// after the record filter, so redacted — or nil when there is no trace or
// recording failed. The Pipeline calls ObserveRecord instead of Observe on
// observers that implement it (the trace exporters: package otelx, ocsf).
// It must not block, and must not change rec.
type RecordObserver interface {
	Observer
	ObserveRecord(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error)
}

// Observers tells every Observer it holds, in order.
type Observers []Observer

// Observe calls Observe on each of os.
func (os Observers) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	for _, o := range os {
		o.Observe(ev, out, recordErr)
	}
}

// ObserveRecord calls ObserveRecord on each of os that is a
// RecordObserver, Observe on the others.
func (os Observers) ObserveRecord(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error) {
	for _, o := range os {
		if ro, ok := o.(RecordObserver); ok {
			ro.ObserveRecord(ctx, ev, out, rec, recordErr)
		} else {
			o.Observe(ev, out, recordErr)
		}
	}
}

// recordObserver is o as a RecordObserver: o itself when it is one, else
// o's Observe behind ObserveRecord.
func recordObserver(o Observer) RecordObserver {
	if ro, ok := o.(RecordObserver); ok {
		return ro
	}
	return observeOnly{o}
}

// observeOnly is an Observer that is not told of records.
type observeOnly struct{ Observer }

func (o observeOnly) ObserveRecord(_ context.Context, ev *warden.Event, out *warden.Outcome, _ *audit.Record, recordErr error) {
	o.Observe(ev, out, recordErr)
}

// observe is the observe stage: the observer is told of the decision, with
// its record as stored.
func (p *Pipeline) observe(ctx context.Context, d *decision) {
	p.observer.ObserveRecord(ctx, d.ev, &d.out, d.stored, d.err)
}
