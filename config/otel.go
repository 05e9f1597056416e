package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/hooks"
)

// OTel protocols (otel.protocol).
const (
	OTelHTTP = "http/protobuf"
	OTelGRPC = "grpc"
)

// Defaults of the otel: section (docs/observability.md).
const (
	DefaultOTelTimeout  = 10 * time.Second
	DefaultOTelQueue    = 4096
	DefaultOTelBatch    = 512
	DefaultOTelInterval = 5 * time.Second
	maxOTelQueue        = 1 << 20
)

// OTel is the config's `otel:` section: where decision spans are exported
// over OTLP. Its zero value (no otel: key) exports nothing and registers
// nothing.
type OTel struct {
	// Endpoint is the collector's base URL (otel.endpoint), e.g.
	// http://127.0.0.1:4318 (http/protobuf: spans are POSTed to
	// ENDPOINT/v1/traces) or http://127.0.0.1:4317 (grpc). An https URL
	// uses TLS. "" means otel is off.
	Endpoint string
	// Protocol is OTelHTTP (the default) or OTelGRPC (otel.protocol).
	Protocol string
	// Headers are sent with every export (otel.headers), e.g. an API key;
	// values may name ${ENV} variables and are never logged.
	Headers map[string]string
	// Sample is the fraction of new traces sampled, 0 to 1 (otel.sample,
	// default 1); a decision inside a caller's trace follows the caller's
	// sampled flag.
	Sample float64
	// Timeout bounds one export (otel.timeout, default 10s).
	Timeout time.Duration
	// Queue bounds the decisions waiting to become spans and the spans
	// waiting to be exported, each (otel.queue, default 4096); beyond it
	// they are dropped and counted, never waited for.
	Queue int
	// Batch is the most spans sent in one export (otel.batch, default 512).
	Batch int
	// Interval is the longest a span waits before its batch is sent
	// (otel.interval, default 5s).
	Interval time.Duration
}

// Enabled reports whether spans are exported.
func (o OTel) Enabled() bool { return o.Endpoint != "" }

const otelKeys = "endpoint, protocol, headers, sample, timeout, queue, batch, interval"

// parseOTel reads `otel: {endpoint, protocol, headers, sample, timeout,
// queue, batch, interval}`.
func parseOTel(file string, v *yaml.Node) (OTel, ErrorList) {
	o := OTel{Protocol: OTelHTTP, Sample: 1, Timeout: DefaultOTelTimeout, Queue: DefaultOTelQueue,
		Batch: DefaultOTelBatch, Interval: DefaultOTelInterval, Headers: map[string]string{}}
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "otel: expected a mapping with %s", otelKeys)
		return OTel{}, errs
	}
	var endpoint *yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if k.Value == "headers" {
			if n.Kind != yaml.MappingNode {
				add(n, "otel.headers: expected a mapping of header names to values")
				continue
			}
			for j := 0; j+1 < len(n.Content); j += 2 {
				hk, hv := n.Content[j], n.Content[j+1]
				if hv.Kind != yaml.ScalarNode || !validHeaderName(hk.Value) {
					add(hk, "otel.headers.%s: expected a header name and a string value", hk.Value)
					continue
				}
				x, err := hooks.ExpandEnv(hv.Value)
				if err != nil {
					add(hv, "otel.headers.%s: %v", hk.Value, err)
					continue
				}
				o.Headers[hk.Value] = x
			}
			continue
		}
		if n.Kind != yaml.ScalarNode {
			add(n, "otel.%s: expected a value", k.Value)
			continue
		}
		switch k.Value {
		case "endpoint":
			endpoint = n
			x, err := hooks.ExpandEnv(n.Value)
			if err != nil {
				add(n, "otel.endpoint: %v", err)
				continue
			}
			u, err := url.Parse(x)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add(n, "otel.endpoint: expected an http(s) URL such as http://127.0.0.1:4318, got %q", n.Value)
				continue
			}
			if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
				add(n, "otel.endpoint: expected a URL without user info, query or fragment, got %q", n.Value)
				continue
			}
			o.Endpoint = x
		case "protocol":
			if n.Value != OTelHTTP && n.Value != OTelGRPC {
				add(n, "otel.protocol: expected %s or %s, got %q", OTelHTTP, OTelGRPC, n.Value)
				continue
			}
			o.Protocol = n.Value
		case "sample":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil || !(f >= 0 && f <= 1) {
				add(n, "otel.sample: expected a fraction from 0 to 1, got %q", n.Value)
				continue
			}
			o.Sample = f
		case "timeout", "interval":
			d, err := time.ParseDuration(n.Value)
			if err != nil || d <= 0 || d > 10*time.Minute {
				add(n, "otel.%s: expected a duration from 1ms to 10m such as 10s, got %q", k.Value, n.Value)
				continue
			}
			if k.Value == "timeout" {
				o.Timeout = d
			} else {
				o.Interval = d
			}
		case "queue", "batch":
			x, err := strconv.Atoi(n.Value)
			if err != nil || x < 1 || x > maxOTelQueue {
				add(n, "otel.%s: expected a whole number from 1 to %d, got %q", k.Value, maxOTelQueue, n.Value)
				continue
			}
			if k.Value == "queue" {
				o.Queue = x
			} else {
				o.Batch = x
			}
		default:
			add(k, "otel: unknown key %q (want %s)", k.Value, otelKeys)
		}
	}
	if endpoint == nil {
		add(v, "otel: endpoint is required (the collector's URL, e.g. http://127.0.0.1:4318)")
	}
	if o.Batch > o.Queue {
		add(v, "otel.batch: %d is larger than otel.queue (%d)", o.Batch, o.Queue)
	}
	if len(errs) > 0 {
		return OTel{}, errs
	}
	return o, nil
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
