package config

import (
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/fleet/registry"
)

func TestStreamAndInstance(t *testing.T) {
	c, err := Parse("w.yaml", []byte(`
stream:
  nats: {url: "nats://127.0.0.1:4222"}
instance: {id: replica-a}
`))
	if err != nil {
		t.Fatal(err)
	}
	n := c.Stream.NATS
	if !n.Enabled() || n.URL != "nats://127.0.0.1:4222" || n.Stream != "WARDEN" || n.Subject != "warden.decisions" ||
		n.Batch != 256 || n.Poll != 200*time.Millisecond || n.Timeout != 5*time.Second {
		t.Errorf("stream.nats defaults: %+v", n)
	}
	if c.Instance != (registry.Config{ID: "replica-a", Heartbeat: 5 * time.Second, Stale: 3}) {
		t.Errorf("instance: %+v", c.Instance)
	}
	c, err = Parse("w.yaml", []byte(`
stream:
  nats: {url: "tls://nats.example:4222", stream: DECISIONS, subject: acme.audit, batch: 64, poll: 1s, timeout: 2s}
instance: {heartbeat: 2s, stale: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Stream.NATS; n.Stream != "DECISIONS" || n.Subject != "acme.audit" || n.Batch != 64 || n.Poll != time.Second || n.Timeout != 2*time.Second {
		t.Errorf("stream.nats: %+v", n)
	}
	if c.Instance.ID != "" || c.Instance.Heartbeat != 2*time.Second || c.Instance.Stale != 5 {
		t.Errorf("instance: %+v", c.Instance)
	}
	if d := Default(); d.Stream.NATS.Enabled() || d.Instance.Heartbeat != registry.DefaultHeartbeat {
		t.Errorf("defaults: %+v %+v", d.Stream, d.Instance)
	}
}

func TestStreamAndInstanceErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`stream: 1`, "w.yaml:1: stream: expected a mapping with nats"},
		{`stream: {kafka: {}}`, `w.yaml:1: stream: unknown key "kafka" (want nats)`},
		{`stream: {nats: {stream: X}}`, "w.yaml:1: stream.nats: missing url"},
		{`stream: {nats: {url: "http://x:1"}}`, "stream.nats.url: expected a nats:// or tls:// URL"},
		{`stream: {nats: {url: "nats://x:1", stream: "a.b"}}`, "stream.nats.stream: \"a.b\""},
		{`stream: {nats: {url: "nats://x:1", subject: "a.*"}}`, "stream.nats.subject: \"a.*\""},
		{`stream: {nats: {url: "nats://x:1", subject: "a..b"}}`, "stream.nats.subject"},
		{`stream: {nats: {url: "nats://x:1", batch: 0}}`, `stream.nats.batch: expected a whole number in 1..4096, got "0"`},
		{`stream: {nats: {url: "nats://x:1", batch: 5000}}`, `stream.nats.batch: expected a whole number in 1..4096, got "5000"`},
		{`stream: {nats: {url: "nats://x:1", poll: 1ms}}`, `stream.nats.poll: expected a duration in 10ms..1m such as 30s, got "1ms"`},
		{`stream: {nats: {url: "nats://x:1", timeout: forever}}`, `stream.nats.timeout: expected a duration in 100ms..5m such as 30s, got "forever"`},
		{`stream: {nats: {url: "nats://x:1", user: x}}`, `stream.nats: unknown key "user"`},
		{`stream: {nats: {url: [1]}}`, "stream.nats.url: expected a string"},
		{`instance: 3`, "instance: expected a mapping with id, heartbeat, stale"},
		{`instance: {id: "` + strings.Repeat("x", 300) + `"}`, "instance.id: expected up to 255 printable characters"},
		{`instance: {heartbeat: 1ms}`, `instance.heartbeat: expected a duration in 100ms..10m such as 30s, got "1ms"`},
		{`instance: {stale: 0}`, `instance.stale: expected a whole number in 1..1000, got "0"`},
		{`instance: {name: x}`, `instance: unknown key "name"`},
	} {
		_, err := Parse("w.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
