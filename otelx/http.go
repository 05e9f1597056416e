package otelx

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/internal/traceparent"
)

// Middleware returns next wrapped so each request runs in a server span
// named "METHOD surface" (e.g. "POST /aos"), a child of the caller's span
// when the request carries a W3C traceparent (tracestate kept): the
// decisions made for the request are children of it, and outbound calls
// made for it carry its trace context (internal/traceparent.Inject). A nil e returns next
// unchanged: without otel: nothing is wrapped.
func (e *Exporter) Middleware(surface string, next http.Handler) http.Handler {
	if e == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := traceparent.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := e.tr.Start(ctx, r.Method+" "+surface, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
				attribute.String("http.route", surface)))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			span.SetAttributes(attribute.Int("http.response.status_code", sw.code()))
			if sw.code() >= 500 {
				span.SetStatus(codes.Error, http.StatusText(sw.code()))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// statusWriter remembers the status a handler wrote; it passes Flush on
// (streaming surfaces) and gives http.ResponseController the writer
// beneath (Unwrap).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
