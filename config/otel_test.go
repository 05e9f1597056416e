package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/otelx"
)

func TestOTel(t *testing.T) {
	t.Setenv("WARDEN_TEST_OTEL_KEY", "k-123")
	c, err := Parse("w.yaml", []byte(`otel:
  endpoint: http://127.0.0.1:4317
  protocol: grpc
  headers: {x-api-key: "${WARDEN_TEST_OTEL_KEY}"}
  sample: 0.25
  timeout: 3s
  queue: 100
  batch: 10
  interval: 250ms
`))
	if err != nil {
		t.Fatal(err)
	}
	want := otelx.Config{Endpoint: "http://127.0.0.1:4317", Protocol: otelx.ProtocolGRPC, Headers: map[string]string{"x-api-key": "k-123"},
		Sample: 0.25, Timeout: 3 * time.Second, Queue: 100, Batch: 10, Interval: 250 * time.Millisecond}
	if !reflect.DeepEqual(c.OTel, want) || !c.OTel.Enabled() {
		t.Errorf("got %+v\nwant %+v", c.OTel, want)
	}
	d, err := Parse("w.yaml", []byte("otel: {endpoint: \"https://otel.example.com\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := d.OTel; o.Protocol != otelx.ProtocolHTTP || o.Sample != 1 || o.Timeout != otelx.DefaultExportTimeout || o.Queue != otelx.DefaultSpanQueue ||
		o.Batch != otelx.DefaultSpanBatch || o.Interval != otelx.DefaultExportInterval {
		t.Errorf("defaults: %+v", o)
	}
	if Default().OTel.Enabled() {
		t.Error("otel on without otel:")
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not a mapping", "otel: 3", "w.yaml:1: otel: expected a mapping with endpoint, protocol, headers, sample, timeout, queue, batch, interval"},
		{"no endpoint", "otel: {protocol: grpc}", "w.yaml:1: otel: missing endpoint"},
		{"bad endpoint", "otel: {endpoint: 127.0.0.1:4318}", `w.yaml:1: otel.endpoint: expected an http(s) URL, got "127.0.0.1:4318"`},
		{"endpoint with query", "otel: {endpoint: \"http://h:1/?a=b\"}", "w.yaml:1: otel.endpoint: expected a URL without user info, query or fragment"},
		{"endpoint with user info", "otel: {endpoint: \"http://user:pass@h:1\"}", "w.yaml:1: otel.endpoint: expected a URL without user info, query or fragment"},
		{"header value", "otel: {endpoint: \"http://h:1\", headers: {a: [1]}}", "w.yaml:1: otel.headers.a: expected a string"},
		{"protocol", "otel: {endpoint: \"http://h:1\", protocol: http/json}", `w.yaml:1: otel.protocol: expected http/protobuf or grpc, got "http/json"`},
		{"sample range", "otel: {endpoint: \"http://h:1\", sample: 1.5}", `w.yaml:1: otel.sample: expected a number in 0..1, got "1.5"`},
		{"sample nan", "otel: {endpoint: \"http://h:1\", sample: .nan}", `w.yaml:1: otel.sample: expected a number in 0..1, got ".nan"`},
		{"timeout", "otel: {endpoint: \"http://h:1\", timeout: 0s}", `w.yaml:1: otel.timeout: expected a duration in 1ms..10m such as 30s, got "0s"`},
		{"queue", "otel: {endpoint: \"http://h:1\", queue: 0}", `w.yaml:1: otel.queue: expected a whole number in 1..1048576, got "0"`},
		{"batch over queue", "otel: {endpoint: \"http://h:1\", queue: 5, batch: 10}", "w.yaml:1: otel.batch: 10 is larger than otel.queue (5)"},
		{"headers", "otel: {endpoint: \"http://h:1\", headers: [a]}", "w.yaml:1: otel.headers: expected a mapping"},
		{"header name", "otel: {endpoint: \"http://h:1\", headers: {\"a b\": x}}", `w.yaml:1: otel.headers.a b: expected a header name`},
		{"header env", "otel: {endpoint: \"http://h:1\", headers: {a: \"${WARDEN_TEST_UNSET_VAR_X}\"}}", "w.yaml:1: otel.headers.a: environment variable WARDEN_TEST_UNSET_VAR_X is not set"},
		{"unknown", "otel: {endpoint: \"http://h:1\", sampler: 1}", `w.yaml:1: otel: unknown key "sampler" (want endpoint, protocol, headers, sample, timeout, queue, batch, interval)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s", err, tc.want)
			} else if strings.Contains(err.Error(), "pass") {
				t.Errorf("the message shows the endpoint's password: %v", err)
			}
		})
	}
}

func TestTraceOCSF(t *testing.T) {
	c, err := Parse("w.yaml", []byte("trace: {ocsf_file: ./d/ocsf.jsonl, ocsf_max_size: 1MiB, ocsf_max_files: 2, ocsf_queue: 10}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tr := c.Trace; tr.OCSFFile != "./d/ocsf.jsonl" || tr.OCSFMaxSize != 1<<20 || tr.OCSFMaxFiles != 2 || tr.OCSFQueue != 10 {
		t.Errorf("%+v", tr)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty file", "trace: {ocsf_file: \"\"}", `trace.ocsf_file: expected a file path, got ""`},
		{"small size", "trace: {ocsf_max_size: 10}", `trace.ocsf_max_size: expected a size of at least 4KiB such as 100MiB, got 10 bytes`},
		{"files", "trace: {ocsf_max_files: 0}", `trace.ocsf_max_files: expected a whole number in 1..1000, got "0"`},
		{"queue", "trace: {ocsf_queue: x}", `trace.ocsf_queue: expected a whole number in 1..1048576, got "x"`},
		{"unknown", "trace: {ocsf: x}", `trace: unknown key "ocsf" (want raw_input, retention, max_size, ocsf_file, ocsf_max_size, ocsf_max_files, ocsf_queue, seal)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("w.yaml", []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// trace.seal: decodes strictly; one source of the KEK.
func TestTraceSeal(t *testing.T) {
	cases := []struct{ name, in, err string }{
		{"defaults", "trace: {}", ""},
		{"all", "trace: {seal: {enabled: false, kek_file: /etc/warden/seal.kek, period: month, retention: 90d}}", ""},
		{"env", "trace: {seal: {kek_env: WARDEN_SEAL_KEK}}", ""},
		{"both", "trace: {seal: {kek_env: X, kek_file: /k}}", "trace.seal.kek_env: expected one of kek_file and kek_env, got both"},
		{"period", "trace: {seal: {period: week}}", `trace.seal.period: expected day or month or year, got "week"`},
		{"retention", "trace: {seal: {retention: 1m}}", "trace.seal.retention"},
		{"unknown", "trace: {seal: {key: x}}", `trace.seal: unknown key "key"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("w.yaml", []byte(c.in))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.name == "defaults" && (!cfg.Trace.Seal.On() || cfg.Trace.Seal.Granularity().String() != "day") {
					t.Errorf("defaults: %+v", cfg.Trace.Seal)
				}
				if c.name == "all" && (cfg.Trace.Seal.On() || cfg.Trace.Seal.Granularity().String() != "month" || cfg.Trace.Seal.Retention != 90*24*time.Hour) {
					t.Errorf("all: %+v", cfg.Trace.Seal)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, want %q", err, c.err)
			}
		})
	}
}
