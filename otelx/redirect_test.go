package otelx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestAttackCollectorRedirect: an OTLP/HTTP collector that answers a
// redirect does not get the spans, or the configured headers, sent on to
// the redirect's target.
func TestAttackCollectorRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		t.Errorf("the redirect target got %s %s with Authorization %q, X-Api-Key %q",
			r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(other.Close)
	var asked atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(collector.Close)
	exp, err := newSpanExporter(Config{Endpoint: collector.URL, Protocol: ProtocolHTTP, Timeout: time.Second,
		Headers: map[string]string{"Authorization": "Bearer collector-token", "X-Api-Key": "collector-key"}})
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("test").Start(context.Background(), "step")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = tp.Shutdown(ctx)
	if asked.Load() == 0 {
		t.Fatal("the collector was never asked: the test proves nothing")
	}
	if leaked.Load() != 0 {
		t.Fatalf("the redirect was followed %d times", leaked.Load())
	}
}
