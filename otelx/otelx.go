// Package otelx exports warden's decisions as OpenTelemetry spans over OTLP
// (http/protobuf or grpc), per the ACS-Trace mapping (ACS
// trace/otel-mapping.json): each decision is a step span named for its
// step (gen_ai.tool.call, acs.message.user, ...) carrying the mapping's
// attributes, an acs.decision span event with the disposition and the
// evaluator, and one child span per guardian that ran (policy, hook) — see
// docs/observability.md.
//
// An Exporter is a pipeline.RecordObserver. It never blocks a decision:
// Observe copies what the span needs into a bounded queue and returns; a
// worker builds the spans; ended spans pass through a second bounded queue
// to the SDK's batch span processor. When either queue is full the
// decision or span is dropped and counted (Dropped). With no otel: in the
// config no Exporter exists and nothing is registered.
//
// Middleware starts a server span for each request of a decision surface,
// continuing the caller's W3C traceparent/tracestate, so a decision span
// is a child of the caller's span; internal/traceparent writes the trace
// context into outbound requests (webhooks, remote guardians, gateway
// upstreams).
package otelx

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/noredirect"
)

// ScopeName is the instrumentation scope of warden's spans.
const ScopeName = "github.com/wardenhq/warden/otelx"

// Exporter turns decisions into spans and exports them. It is safe for
// concurrent use; Shutdown flushes it.
type Exporter struct {
	tp    *sdktrace.TracerProvider
	tr    trace.Tracer
	items chan *item
	stop  chan struct{} // closed by Shutdown: the worker drains and ends
	// pending counts the decisions queued and not yet made into spans.
	pending atomic.Int64
	// droppedDecisions counts the decisions a full queue dropped.
	droppedDecisions atomic.Uint64
	closing          atomic.Bool
	wg               sync.WaitGroup
	spans            *queueProcessor
}

var _ pipeline.RecordObserver = (*Exporter)(nil)

// New builds an Exporter sending to the collector cfg names (cfg must be
// validated, as the config file's otel: section is; cfg.Enabled() must be
// true). It connects
// lazily: an unreachable collector is not an error here. Failed exports
// are logged to log (nil: discarded) at most once a minute.
func New(cfg Config, log *slog.Logger) (*Exporter, error) {
	exp, err := newSpanExporter(cfg)
	if err != nil {
		return nil, err
	}
	routeErrors(log)
	return newExporter(cfg, exp), nil
}

// newExporter builds an Exporter around exp (tests pass their own).
func newExporter(cfg Config, exp sdktrace.SpanExporter) *Exporter {
	cfg = withDefaults(cfg)
	bsp := sdktrace.NewBatchSpanProcessor(exp,
		sdktrace.WithMaxQueueSize(cfg.Queue), sdktrace.WithMaxExportBatchSize(cfg.Batch),
		sdktrace.WithBatchTimeout(cfg.Interval), sdktrace.WithExportTimeout(cfg.Timeout),
		// The queue in front (queueProcessor) is the one that drops:
		// its feeder may wait here, a decision never does.
		sdktrace.WithBlocking())
	qp := newQueueProcessor(bsp, cfg.Queue)
	res := resource.NewSchemaless(attribute.String("service.name", "warden"))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(qp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Sample))),
		sdktrace.WithResource(res))
	e := &Exporter{tp: tp, tr: tp.Tracer(ScopeName), items: make(chan *item, cfg.Queue), stop: make(chan struct{}), spans: qp}
	e.wg.Add(1)
	go e.work()
	return e
}

func withDefaults(c Config) Config {
	if c.Queue <= 0 {
		c.Queue = DefaultSpanQueue
	}
	if c.Batch <= 0 || c.Batch > c.Queue {
		c.Batch = min(DefaultSpanBatch, c.Queue)
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultExportTimeout
	}
	if c.Interval <= 0 {
		c.Interval = DefaultExportInterval
	}
	if c.Protocol == "" {
		c.Protocol = ProtocolHTTP
	}
	return c
}

// newSpanExporter builds the OTLP exporter of cfg.Protocol. The endpoint
// is a base URL: http/protobuf posts to its path + /v1/traces.
func newSpanExporter(cfg Config) (sdktrace.SpanExporter, error) {
	cfg = withDefaults(cfg)
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otel.endpoint: expected an http(s) URL, got %q", cfg.Endpoint)
	}
	// Retries stay within one export's timeout.
	ctx := context.Background()
	switch cfg.Protocol {
	case ProtocolHTTP:
		opts := []otlptracehttp.Option{
			otlptracehttp.WithEndpoint(u.Host),
			otlptracehttp.WithURLPath(strings.TrimSuffix(u.Path, "/") + "/v1/traces"),
			otlptracehttp.WithTimeout(cfg.Timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
				MaxInterval: 2 * time.Second, MaxElapsedTime: cfg.Timeout}),
		}
		if u.Scheme == "http" {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
		}
		// A collector's redirect is not followed: it would carry the spans
		// and otel.headers (tokens) wherever its Location points. The
		// client's own timeout is the export's.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		opts = append(opts, otlptracehttp.WithHTTPClient(noredirect.Client(&http.Client{Transport: tr, Timeout: cfg.Timeout})))
		return otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		opts := []otlptracegrpc.Option{
			otlptracegrpc.WithEndpoint(u.Host),
			otlptracegrpc.WithTimeout(cfg.Timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
				MaxInterval: 2 * time.Second, MaxElapsedTime: cfg.Timeout}),
		}
		if u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("otel.protocol: expected %s or %s, got %q", ProtocolHTTP, ProtocolGRPC, cfg.Protocol)
}

// Observe exports a decision without a caller's trace context (a root
// span). It implements pipeline.Observer.
func (e *Exporter) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	e.ObserveRecord(context.Background(), ev, out, nil, recordErr)
}

// ObserveRecord queues the span of one decision, a child of the span in
// ctx (the caller's); when the queue is full it is dropped and counted.
// It implements pipeline.RecordObserver.
func (e *Exporter) ObserveRecord(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsSampled() {
		return // the caller's trace is not sampled: neither is its child
	}
	if e.closing.Load() || len(e.items) == cap(e.items) {
		e.droppedDecisions.Add(1) // full: not even the copy is made
		return
	}
	it := newItem(ctx, ev, out, rec, recordErr, time.Now())
	e.pending.Add(1)
	select {
	case e.items <- it:
	default:
		e.pending.Add(-1)
		e.droppedDecisions.Add(1)
	}
}

// work builds the spans of queued decisions; once stopped it builds those
// still queued and ends.
func (e *Exporter) work() {
	defer e.wg.Done()
	for {
		select {
		case it := <-e.items:
			e.emit(it)
		case <-e.stop:
			for {
				select {
				case it := <-e.items:
					e.emit(it)
				default:
					return
				}
			}
		}
	}
}

func (e *Exporter) emit(it *item) {
	it.emit(e.tr)
	e.pending.Add(-1)
}

// Flush builds the spans of every queued decision and exports every
// buffered span, waiting until ctx is done.
func (e *Exporter) Flush(ctx context.Context) error {
	if err := waitZero(ctx, &e.pending); err != nil {
		return err
	}
	return e.tp.ForceFlush(ctx)
}

// waitZero polls n until it is 0 or ctx is done.
func waitZero(ctx context.Context, n *atomic.Int64) error {
	for n.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// Tracer returns the tracer of warden's spans (Middleware's server spans).
func (e *Exporter) Tracer() trace.Tracer { return e.tr }

// Dropped returns how many decisions (never made into spans) and spans
// (never exported) full queues dropped so far.
func (e *Exporter) Dropped() (decisions, spans uint64) {
	return e.droppedDecisions.Load(), e.spans.dropped.Load()
}

// Shutdown stops taking decisions, builds the spans of those queued, and
// exports what is buffered until ctx is done. It is safe to call twice.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e.closing.Swap(true) {
		return nil
	}
	close(e.stop)
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("otel: shutting down: %w", ctx.Err())
	}
	if err := e.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("otel: flushing spans: %w", err)
	}
	return nil
}
