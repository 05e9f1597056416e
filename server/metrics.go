package server

import (
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/wardenhq/warden"
)

// Metrics holds warden's Prometheus collectors. It implements pipeline.Observer.
type Metrics struct {
	Registry     *prometheus.Registry
	decisions    *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	traceErrors  prometheus.Counter
	batchSize    prometheus.Histogram
	batchLatency prometheus.Histogram
	batchErrors  prometheus.Counter
	asyncRuns    *prometheus.CounterVec
	asyncDropped *prometheus.CounterVec
}

var _ pipeline.Observer = (*Metrics)(nil)

// NewMetrics registers warden's collectors (and the Go and process collectors)
// on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_decisions_total",
			Help: "Decisions answered, by event and decision.",
		}, []string{"event", "decision"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warden_decision_duration_seconds",
			Help:    "Time to decide (the guardian chain, without recording), by event.",
			Buckets: []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2, 0.1, 1},
		}, []string{"event"}),
		traceErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warden_trace_record_errors_total",
			Help: "Decisions that could not be recorded and were denied (fail closed).",
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "warden_trace_batch_size",
			Help:    "Records committed per trace batch (group commit).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		batchLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "warden_trace_batch_duration_seconds",
			Help:    "Time to write and commit one trace batch.",
			Buckets: prometheus.ExponentialBuckets(5e-5, 2, 14),
		}),
		batchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warden_trace_batch_errors_total",
			Help: "Trace batches that failed to commit.",
		}),
	}
	m.asyncRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "warden_hooks_async_runs_total",
		Help: "Async hook runs, by hook and result (ok or error).",
	}, []string{"hook", "result"})
	m.asyncDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "warden_hooks_async_dropped_total",
		Help: "Async hook runs dropped because the queue was full (each also recorded in the trace).",
	}, []string{"hook"})
	m.Registry.MustRegister(m.decisions, m.latency, m.traceErrors, m.batchSize, m.batchLatency, m.batchErrors,
		m.asyncRuns, m.asyncDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Observe counts one decision.
func (m *Metrics) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	m.decisions.WithLabelValues(ev.Name, out.Verdict.String()).Inc()
	m.latency.WithLabelValues(ev.Name).Observe(out.Latency.Seconds())
	if recordErr != nil {
		m.traceErrors.Inc()
	}
}

// ObserveBatch records one trace batch commit (the store's batch callback).
func (m *Metrics) ObserveBatch(size int, d time.Duration, err error) {
	m.batchSize.Observe(float64(size))
	m.batchLatency.Observe(d.Seconds())
	if err != nil {
		m.batchErrors.Inc()
	}
}

// AsyncRun counts one async hook run.
func (m *Metrics) AsyncRun(hook string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.asyncRuns.WithLabelValues(hook, result).Inc()
}

// AsyncDrop counts one dropped async hook run.
func (m *Metrics) AsyncDrop(hook string) { m.asyncDropped.WithLabelValues(hook).Inc() }

// AddCounterFunc registers a counter named name whose value f reports (a
// count kept elsewhere, e.g. the spans or OCSF events a full queue dropped).
func (m *Metrics) AddCounterFunc(name, help string, f func() uint64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
		func() float64 { return float64(f()) }))
}
