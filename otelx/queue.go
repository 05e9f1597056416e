package otelx

import (
	"context"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// queueProcessor is a span processor that hands ended spans to next (the
// batch span processor, which may block) from its own goroutine through a
// bounded queue: OnEnd never waits, and a span that finds the queue full
// is dropped and counted. The SDK's own processor drops silently; this one
// makes the drops a number (warden_otel_spans_dropped_total).
type queueProcessor struct {
	next    sdktrace.SpanProcessor
	q       chan sdktrace.ReadOnlySpan
	stop    chan struct{}
	done    chan struct{}
	pending atomic.Int64
	dropped atomic.Uint64
	once    sync.Once
}

var _ sdktrace.SpanProcessor = (*queueProcessor)(nil)

func newQueueProcessor(next sdktrace.SpanProcessor, size int) *queueProcessor {
	p := &queueProcessor{next: next, q: make(chan sdktrace.ReadOnlySpan, size),
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.feed()
	return p
}

func (p *queueProcessor) feed() {
	defer close(p.done)
	for {
		select {
		case s := <-p.q:
			p.next.OnEnd(s)
			p.pending.Add(-1)
		case <-p.stop:
			for {
				select {
				case s := <-p.q:
					p.next.OnEnd(s)
					p.pending.Add(-1)
				default:
					return
				}
			}
		}
	}
}

// OnStart implements sdktrace.SpanProcessor (nothing to do at start).
func (p *queueProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues s for export, or drops and counts it when the queue is full.
func (p *queueProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.pending.Add(1)
	select {
	case p.q <- s:
	default:
		p.pending.Add(-1)
		p.dropped.Add(1)
	}
}

// ForceFlush hands every queued span on and flushes next, until ctx is done.
func (p *queueProcessor) ForceFlush(ctx context.Context) error {
	if err := waitZero(ctx, &p.pending); err != nil {
		return err
	}
	return p.next.ForceFlush(ctx)
}

// Shutdown hands the queued spans on (waiting at most until ctx is done)
// and shuts next down.
func (p *queueProcessor) Shutdown(ctx context.Context) error {
	p.once.Do(func() { close(p.stop) })
	select {
	case <-p.done:
	case <-ctx.Done():
		// next's Shutdown releases a feeder waiting in next.OnEnd.
	}
	return p.next.Shutdown(ctx)
}
