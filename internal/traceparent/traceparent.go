// Package traceparent writes the W3C trace context of a request's span
// into outbound HTTP requests (webhooks, remote guardians, gateway
// upstreams), so the calls a decision makes join the caller's trace. It
// depends on the OpenTelemetry API only: without otel: no span context is
// ever in a context, and Inject writes nothing.
package traceparent

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Propagator reads and writes W3C traceparent and tracestate headers.
var Propagator = propagation.TraceContext{}

// Inject writes the span context of ctx into h as traceparent (and
// tracestate when it has one), replacing any there. It writes nothing when
// ctx carries no valid span context.
func Inject(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	Propagator.Inject(ctx, propagation.HeaderCarrier(h))
}
