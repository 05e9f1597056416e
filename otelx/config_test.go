package otelx

import (
	"strings"
	"testing"
)

// TestConfigValidate: the rules of the otel: section its tags cannot say.
func TestConfigValidate(t *testing.T) {
	if c := DefaultConfig(); c.Enabled() || c.Protocol != ProtocolHTTP || c.Queue != DefaultSpanQueue || c.Batch != DefaultSpanBatch {
		t.Fatalf("defaults: %+v", c)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"valid", func(c *Config) {}, ""},
		{"query", func(c *Config) { c.Endpoint = "http://h:1/?token=secret" }, "endpoint: expected a URL without user info, query or fragment"},
		{"fragment", func(c *Config) { c.Endpoint = "http://h:1/#x" }, "endpoint: expected a URL without"},
		{"header name", func(c *Config) { c.Headers = map[string]string{"ok": "1", "a:b": "2"} }, "headers.a:b: expected a header name"},
		{"batch over queue", func(c *Config) { c.Queue, c.Batch = 5, 10 }, "batch: 10 is larger than otel.queue (5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Endpoint = "http://127.0.0.1:4318"
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Fatalf("the message shows the endpoint's query: %v", err)
			}
		})
	}
}
