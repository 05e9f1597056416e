package config

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/fleet/registry"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/stream"
)

// Bounds of the stream.nats and instance sections (docs/scaling.md).
const (
	MaxStreamBatch     = 4096
	MinStreamPoll      = 10 * time.Millisecond
	MaxStreamPoll      = time.Minute
	MinStreamTimeout   = 100 * time.Millisecond
	MaxStreamTimeout   = 5 * time.Minute
	MinHeartbeat       = 100 * time.Millisecond
	MaxHeartbeat       = 10 * time.Minute
	MaxStaleHeartbeats = 1000
	maxInstanceID      = 255
)

// Stream is the config's `stream:` section: where the decision stream is
// published. Its zero value publishes none.
type Stream struct {
	NATS NATS
}

// NATS is `stream.nats`: the JetStream stream the trace is published to
// (stream.Options; defaults filled in).
type NATS struct {
	// URL is the NATS server (stream.nats.url); "" means no stream. It
	// may name ${ENV} variables and hold credentials: it is never logged.
	URL string
	// Stream is the JetStream stream, created if absent (default WARDEN).
	Stream string
	// Subject prefixes the records' subjects (default warden.decisions):
	// <subject>.<tenant or _>.<surface>.<decision>.
	Subject string
	// Batch bounds the records read and awaiting acknowledgement at once
	// (default 256, at most 4096).
	Batch int
	// Poll is how often an idle publisher looks for new records (default
	// 200ms).
	Poll time.Duration
	// Timeout bounds connecting and each batch's acknowledgements (default
	// 5s).
	Timeout time.Duration
}

// Enabled reports whether the decision stream is published.
func (n NATS) Enabled() bool { return n.URL != "" }

// Instance is the config's `instance:` section: how this replica names
// itself in the registry (GET /api/instances).
type Instance struct {
	// ID is instance.id; "" means hostname:port.
	ID string
	// Heartbeat is how often the replica registers itself (default 5s).
	Heartbeat time.Duration
	// Stale is after how many missed heartbeats a replica is shown stale
	// (default 3).
	Stale int
}

// DefaultInstance is the instance section without an instance: key.
func DefaultInstance() Instance {
	return Instance{Heartbeat: registry.DefaultHeartbeat, Stale: registry.DefaultStale}
}

const streamKeys = "nats"
const natsKeys = "url, stream, subject, batch, poll, timeout"
const instanceKeys = "id, heartbeat, stale"

// parseStream reads `stream: {nats: {url, stream, subject, batch, poll,
// timeout}}`.
func parseStream(file string, v *yaml.Node) (Stream, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	var s Stream
	if v.Kind != yaml.MappingNode {
		add(v, "stream: expected a mapping with %s", streamKeys)
		return s, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if k.Value != "nats" {
			add(k, "stream: unknown key %q (want %s)", k.Value, streamKeys)
			continue
		}
		s.NATS, errs = parseNATS(file, n, errs)
	}
	return s, errs
}

func parseNATS(file string, v *yaml.Node, errs ErrorList) (NATS, ErrorList) {
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	o := NATS{Stream: stream.DefaultStream, Subject: stream.DefaultSubject, Batch: stream.DefaultBatch,
		Poll: stream.DefaultPoll, Timeout: stream.DefaultTimeout}
	if v.Kind != yaml.MappingNode {
		add(v, "stream.nats: expected a mapping with %s", natsKeys)
		return NATS{}, errs
	}
	var urlNode *yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if n.Kind != yaml.ScalarNode {
			add(n, "stream.nats.%s: expected a value", k.Value)
			continue
		}
		switch k.Value {
		case "url":
			urlNode = n
			x, err := hooks.ExpandEnv(n.Value)
			if err != nil {
				add(n, "stream.nats.url: %v", err)
				continue
			}
			u, err := url.Parse(x)
			if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
				add(n, "stream.nats.url: expected a nats:// or tls:// URL such as nats://127.0.0.1:4222")
				continue
			}
			o.URL = x
		case "stream":
			if err := stream.ValidStreamName(n.Value); err != nil {
				add(n, "stream.nats.stream: %q: a JetStream stream name holds letters, digits, '-' and '_'", n.Value)
				continue
			}
			o.Stream = n.Value
		case "subject":
			if err := stream.ValidSubject(n.Value); err != nil {
				add(n, "stream.nats.subject: %q: expected tokens separated by '.', without wildcards or white space", n.Value)
				continue
			}
			o.Subject = n.Value
		case "batch":
			b, err := strconv.Atoi(n.Value)
			if err != nil || b < 1 || b > MaxStreamBatch {
				add(n, "stream.nats.batch: expected a number from 1 to %d, got %q", MaxStreamBatch, n.Value)
				continue
			}
			o.Batch = b
		case "poll", "timeout":
			lo, hi, dst := MinStreamPoll, MaxStreamPoll, &o.Poll
			if k.Value == "timeout" {
				lo, hi, dst = MinStreamTimeout, MaxStreamTimeout, &o.Timeout
			}
			d, err := time.ParseDuration(n.Value)
			if err != nil || d < lo || d > hi {
				add(n, "stream.nats.%s: expected a duration from %s to %s, such as 1s, got %q", k.Value, lo, hi, n.Value)
				continue
			}
			*dst = d
		default:
			add(k, "stream.nats: unknown key %q (want %s)", k.Value, natsKeys)
		}
	}
	if urlNode == nil {
		add(v, "stream.nats: needs a url, such as nats://127.0.0.1:4222")
	}
	return o, errs
}

// parseInstance reads `instance: {id, heartbeat, stale}`.
func parseInstance(file string, v *yaml.Node) (Instance, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	in := DefaultInstance()
	if v.Kind != yaml.MappingNode {
		add(v, "instance: expected a mapping with %s", instanceKeys)
		return in, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if n.Kind != yaml.ScalarNode {
			add(n, "instance.%s: expected a value", k.Value)
			continue
		}
		switch k.Value {
		case "id":
			x, err := hooks.ExpandEnv(n.Value)
			if err != nil {
				add(n, "instance.id: %v", err)
				continue
			}
			if len(x) > maxInstanceID || !printable(x) {
				add(n, "instance.id: expected up to %d printable characters", maxInstanceID)
				continue
			}
			in.ID = x
		case "heartbeat":
			d, err := time.ParseDuration(n.Value)
			if err != nil || d < MinHeartbeat || d > MaxHeartbeat {
				add(n, "instance.heartbeat: expected a duration from %s to %s, such as 5s, got %q", MinHeartbeat, MaxHeartbeat, n.Value)
				continue
			}
			in.Heartbeat = d
		case "stale":
			s, err := strconv.Atoi(n.Value)
			if err != nil || s < 1 || s > MaxStaleHeartbeats {
				add(n, "instance.stale: expected a number of heartbeats from 1 to %d, got %q", MaxStaleHeartbeats, n.Value)
				continue
			}
			in.Stale = s
		default:
			add(k, "instance: unknown key %q (want %s)", k.Value, instanceKeys)
		}
	}
	return in, errs
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
