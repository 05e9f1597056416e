package otelx

import (
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/conf"
)

// OTLP protocols (otel.protocol).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Defaults of the otel: section (docs/observability.md).
const (
	DefaultExportTimeout  = 10 * time.Second
	DefaultSpanQueue      = 4096
	DefaultSpanBatch      = 512
	DefaultExportInterval = 5 * time.Second
)

// Config is the otel: section of warden's configuration
// (docs/observability.md): where decision spans are exported over OTLP.
// Without an endpoint (no otel: key) nothing is exported and nothing is
// registered.
type Config struct {
	// Endpoint is the collector's base URL (otel.endpoint, required in
	// the section, ${VAR}s expanded), e.g. http://127.0.0.1:4318
	// (http/protobuf: spans are POSTed to ENDPOINT/v1/traces) or
	// http://127.0.0.1:4317 (grpc). An https URL uses TLS. "" means otel is
	// off.
	Endpoint string `yaml:"endpoint" conf:"env,url,required"`
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC
	// (otel.protocol).
	Protocol string `yaml:"protocol" oneof:"http/protobuf|grpc"`
	// Headers are sent with every export (otel.headers), e.g. an API key;
	// values may name ${ENV} variables and are never logged.
	Headers map[string]string `yaml:"headers" conf:"env"`
	// Sample is the fraction of new traces sampled, 0 to 1 (otel.sample,
	// default 1); a decision inside a caller's trace follows the caller's
	// sampled flag.
	Sample float64 `yaml:"sample" range:"0..1"`
	// Timeout bounds one export (otel.timeout, default 10s).
	Timeout time.Duration `yaml:"timeout" range:"1ms..10m"`
	// Queue bounds the decisions waiting to become spans and the spans
	// waiting to be exported, each (otel.queue, default 4096); beyond it
	// they are dropped and counted, never waited for.
	Queue int `yaml:"queue" range:"1..1048576"`
	// Batch is the most spans sent in one export (otel.batch, default 512,
	// at most the queue).
	Batch int `yaml:"batch" range:"1..1048576"`
	// Interval is the longest a span waits before its batch is sent
	// (otel.interval, default 5s).
	Interval time.Duration `yaml:"interval" range:"1ms..10m"`
}

// DefaultConfig is the otel: section's defaults: no endpoint (off), the
// http/protobuf protocol, every new trace sampled.
func DefaultConfig() Config {
	return Config{Protocol: ProtocolHTTP, Sample: 1, Timeout: DefaultExportTimeout, Queue: DefaultSpanQueue,
		Batch: DefaultSpanBatch, Interval: DefaultExportInterval}
}

// Enabled reports whether spans are exported.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// Validate checks what the tags cannot: the endpoint has no user info,
// query or fragment; header names are HTTP tokens; a batch fits in the
// queue.
func (c *Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.Endpoint); err == nil && (u.RawQuery != "" || u.Fragment != "" || u.User != nil) {
		// The expanded URL may hold a secret: the message does not quote it.
		errs = append(errs, conf.Errorf("endpoint", "expected a URL without user info, query or fragment"))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
		if !validHeaderName(name) {
			errs = append(errs, conf.Errorf("headers."+name, "expected a header name and a string value"))
		}
	}
	if c.Batch > c.Queue {
		errs = append(errs, conf.Errorf("batch", "%d is larger than otel.queue (%d)", c.Batch, c.Queue))
	}
	return errors.Join(errs...)
}

// validHeaderName reports whether s is an HTTP header field name (an RFC
// 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
	})
}
