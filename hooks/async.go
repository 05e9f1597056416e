package hooks

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
)

// Pool runs async hooks on a fixed number of workers fed by a bounded
// queue. A full queue drops the run: counted, reported to OnDrop and
// recorded in the trace — never silent, never blocking the sync path.
type Pool struct {
	queue   chan asyncJob
	wg      sync.WaitGroup
	store   audit.Store
	runs    atomic.Uint64
	dropped atomic.Uint64
	mu      sync.RWMutex
	closed  bool
	// abandoned is set when Close's grace period ends: queued runs are
	// then recorded as dropped instead of run.
	abandoned atomic.Bool
	// OnRun and OnDrop, if set, are told of every async run and drop
	// (metrics); they must not block.
	OnRun  func(hook string, err error)
	OnDrop func(hook string)
	// Filter, if set, changes each record before it is stored (the
	// Decider's record filter: secrets redacted). Set it before use.
	Filter audit.RecordFilter
}

// Async runs the async hooks the router declares for each decided event on
// the pool: the Decider's pipeline.Async, so they run for every surface.
type Async struct {
	Router *Router
	Pool   *Pool
}

var _ pipeline.Async = Async{}

// RunAsync queues ev's async hooks (never blocks: a full queue drops and
// records the run).
func (a Async) RunAsync(ev *warden.Event) {
	for _, h := range a.Router.Async(ev.Name) {
		a.Pool.submit(h, ev)
	}
}

type asyncJob struct {
	h  *hook
	ev *warden.Event
}

// Default pool sizes.
const (
	DefaultWorkers   = 4
	DefaultQueueSize = 1024
)

// NewPool starts workers; store (may be nil) records each run and drop.
func NewPool(workers, queue int, store audit.Store) *Pool {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	if queue <= 0 {
		queue = DefaultQueueSize
	}
	p := &Pool{queue: make(chan asyncJob, queue), store: store}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// Stats returns the runs completed and the runs dropped so far.
func (p *Pool) Stats() (runs, dropped uint64) { return p.runs.Load(), p.dropped.Load() }

// submit queues h for ev, or drops it when the queue is full.
func (p *Pool) submit(h *hook, ev *warden.Event) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.closed {
		select {
		case p.queue <- asyncJob{h, ev}:
			return
		default:
		}
	}
	p.drop(asyncJob{h, ev}, "dropped: the async hook queue is full")
}

func (p *Pool) work() {
	defer p.wg.Done()
	for j := range p.queue {
		if p.abandoned.Load() {
			p.drop(j, "dropped: shut down before it ran (grace period ended)")
			continue
		}
		p.run(j)
	}
}

// drop counts and records a run that does not happen.
func (p *Pool) drop(j asyncJob, why string) {
	p.dropped.Add(1)
	if p.OnDrop != nil {
		p.OnDrop(j.h.Name)
	}
	p.record(j.ev, warden.Result{Guardian: j.h.Name, Kind: j.h.Kind, Mode: "async", Error: why},
		"async hook "+j.h.Name+" "+why, 0)
}

func (p *Pool) run(j asyncJob) {
	ctx, cancel := context.WithTimeout(context.Background(), j.h.Timeout)
	defer cancel()
	t0 := time.Now()
	if j.h.step.When != nil {
		if ok, err := j.h.step.When(ctx, j.ev); err == nil && !ok {
			return
		}
	}
	d, err := j.h.step.Handler.Decide(ctx, j.ev)
	r := warden.Result{Guardian: j.h.Name, Kind: j.h.Kind, Decision: d.Verdict.String(), Mode: "async",
		Reason: d.Reason, LatencyUS: time.Since(t0).Microseconds()}
	if len(d.Results) == 1 {
		r.Patch = d.Results[0].Patch
	}
	if d.Verdict == warden.Modify {
		r.Refused = "async: an async hook cannot change the event"
	}
	if err != nil {
		r.Error = err.Error()
	}
	p.runs.Add(1)
	if p.OnRun != nil {
		p.OnRun(j.h.Name, err)
	}
	p.record(j.ev, r, "async hook "+j.h.Name, time.Since(t0))
}

// record writes one trace record for an async run or drop. Async results
// never change the event's outcome: the record's decision is the hook's own.
func (p *Pool) record(ev *warden.Event, r warden.Result, reason string, lat time.Duration) {
	if p.store == nil {
		return
	}
	out := &warden.Outcome{Reason: reason, Results: []warden.Result{r}, Latency: lat}
	rec := audit.NewRecord(ev, out, time.Now())
	rec.Decision = r.Decision
	ctx, cancel := context.WithTimeout(context.Background(), audit.RecordTimeout)
	defer cancel()
	if p.Filter != nil && p.Filter(ctx, rec) != nil {
		return // not fit to store: counted as a failed record would be
	}
	_ = p.store.Record(ctx, rec) // a failed audit of an async run cannot fail anything: counted by the store
}

// closeWait bounds how long Close waits, after its grace period, for the
// runs in flight and the drop records of the queued ones.
const closeWait = 5 * time.Second

// Close stops accepting work and lets queued runs finish until ctx is done.
// Runs still queued then are not run: each is recorded as dropped, one
// record each, before Close returns (runs in flight get closeWait more).
func (p *Pool) Close(ctx context.Context) {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	p.abandoned.Store(true)
	for j := range p.queue { // shared with the workers: each job is taken once
		p.drop(j, "dropped: shut down before it ran (grace period ended)")
	}
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}
