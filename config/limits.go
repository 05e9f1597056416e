package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Limits are the resource bounds of the `limits:` key (docs/security-limits.md
// describes each, its default and what happens past it). Zero values are
// replaced by the defaults in DefaultLimits.
type Limits struct {
	// Batch is the most entries a JSON-RPC batch may hold (limits.batch).
	Batch int
	// ResponseBytes bounds the response to one POST /aos body
	// (limits.response_bytes).
	ResponseBytes int64
	// Connections bounds the connections the listener holds open
	// (limits.connections).
	Connections int
	// HeaderTimeout bounds reading a request's headers
	// (limits.header_timeout).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body (limits.body_timeout).
	BodyTimeout time.Duration
	// HookProcs bounds the processes one command hook runs at once
	// (limits.hook_procs).
	HookProcs int
	// RunsBytes bounds one /api/hooks/runs response (limits.runs_bytes).
	RunsBytes int64
	// TenantStreams bounds the runs streams, and the approvals streams,
	// one tenant's callers hold open at once (limits.tenant_streams).
	TenantStreams int
}

// DefaultLimits are the limits used where the config sets none.
func DefaultLimits() Limits {
	return Limits{
		Batch:         1000,
		ResponseBytes: 8 << 20,
		Connections:   4096,
		HeaderTimeout: 10 * time.Second,
		BodyTimeout:   30 * time.Second,
		HookProcs:     8,
		RunsBytes:     8 << 20,
		TenantStreams: 16,
	}
}

// limitKeys lists the keys of `limits:`, for messages.
const limitKeys = "batch, response_bytes, connections, header_timeout, body_timeout, hook_procs, runs_bytes, tenant_streams"

// parseLimits reads the `limits:` mapping over the defaults.
func parseLimits(file string, v *yaml.Node) (Limits, ErrorList) {
	l := DefaultLimits()
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "limits: expected a mapping with %s", limitKeys)
		return l, errs
	}
	count := func(n *yaml.Node, key string, dst *int, max int) {
		x, err := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil || x < 1 || x > max {
			add(n, "limits.%s: expected an integer in 1..%d, got %q", key, max, n.Value)
			return
		}
		*dst = x
	}
	size := func(n *yaml.Node, key string, dst *int64) {
		x, err := ParseBytes(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil || x < 1024 {
			add(n, "limits.%s: expected a size of at least 1KiB such as 8MiB or 1048576, got %q", key, n.Value)
			return
		}
		*dst = x
	}
	dur := func(n *yaml.Node, key string, dst *time.Duration) {
		d, err := time.ParseDuration(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil || d < 100*time.Millisecond || d > time.Hour {
			add(n, "limits.%s: expected a duration in 100ms..1h such as 30s, got %q", key, n.Value)
			return
		}
		*dst = d
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "batch":
			count(n, k.Value, &l.Batch, 1_000_000)
		case "connections":
			count(n, k.Value, &l.Connections, 1_000_000)
		case "hook_procs":
			count(n, k.Value, &l.HookProcs, 10_000)
		case "tenant_streams":
			count(n, k.Value, &l.TenantStreams, 10_000)
		case "response_bytes":
			size(n, k.Value, &l.ResponseBytes)
		case "runs_bytes":
			size(n, k.Value, &l.RunsBytes)
		case "header_timeout":
			dur(n, k.Value, &l.HeaderTimeout)
		case "body_timeout":
			dur(n, k.Value, &l.BodyTimeout)
		default:
			add(k, "limits: unknown key %q (want %s)", k.Value, limitKeys)
		}
	}
	return l, errs
}

// ParseBytes reads a size: a whole number of bytes, optionally followed by
// KiB, MiB or GiB (or KB, MB, GB: powers of 1000).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}
