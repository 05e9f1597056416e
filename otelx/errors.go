package otelx

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
)

// errorEvery is how often the SDK's errors (failed exports) are logged at
// most; the ones in between are counted in the next message.
const errorEvery = time.Minute

// sdkErrors routes the OpenTelemetry SDK's errors — which go to a global
// handler, by default printing each to stderr — to the logger of the
// newest Exporter, rate-limited.
var sdkErrors struct {
	once       sync.Once
	log        atomic.Pointer[slog.Logger]
	lastLogged atomic.Int64 // unix nanoseconds
	suppressed atomic.Uint64
}

func routeErrors(log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sdkErrors.log.Store(log)
	sdkErrors.once.Do(func() {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(handleError))
	})
}

func handleError(err error) {
	now := time.Now().UnixNano()
	last := sdkErrors.lastLogged.Load()
	if now-last < int64(errorEvery) || !sdkErrors.lastLogged.CompareAndSwap(last, now) {
		sdkErrors.suppressed.Add(1)
		return
	}
	if l := sdkErrors.log.Load(); l != nil {
		// The error names the collector's URL and the failure; the
		// exporter's headers are never in it.
		l.Warn("exporting spans (otel:)", "err", err, "similar_errors_not_logged", sdkErrors.suppressed.Swap(0))
	}
}
