package config

import (
	"time"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/jsonrpc"
)

// Limits are the resource bounds of the `limits:` key (docs/security-limits.md
// describes each, its default and what happens past it). Keys that are
// absent keep DefaultLimits. The section stays in config, not server that
// applies most of it: guardian reads config (limits.hook_procs) and the
// core imports no surface (docs/architecture.md).
type Limits struct {
	// Batch is the most entries a JSON-RPC batch may hold (limits.batch).
	Batch int `yaml:"batch" range:"1..1000000"`
	// ResponseBytes bounds the response to one POST /aos body
	// (limits.response_bytes).
	ResponseBytes conf.Bytes `yaml:"response_bytes" range:"1KiB.."`
	// Connections bounds the connections the listener holds open
	// (limits.connections).
	Connections int `yaml:"connections" range:"1..1000000"`
	// HeaderTimeout bounds reading a request's headers
	// (limits.header_timeout).
	HeaderTimeout time.Duration `yaml:"header_timeout" range:"100ms..1h"`
	// BodyTimeout bounds reading a request's body (limits.body_timeout).
	BodyTimeout time.Duration `yaml:"body_timeout" range:"100ms..1h"`
	// HookProcs bounds the processes one command hook runs at once
	// (limits.hook_procs).
	HookProcs int `yaml:"hook_procs" range:"1..10000"`
	// RunsBytes bounds one /api/hooks/runs response (limits.runs_bytes).
	RunsBytes conf.Bytes `yaml:"runs_bytes" range:"1KiB.."`
	// TenantStreams bounds the runs streams, and the approvals streams,
	// one tenant's callers hold open at once (limits.tenant_streams).
	TenantStreams int `yaml:"tenant_streams" range:"1..10000"`
}

// DefaultLimits are the limits used where the config sets none.
func DefaultLimits() Limits {
	return Limits{
		Batch:         jsonrpc.DefaultMaxBatch,
		ResponseBytes: conf.Bytes(jsonrpc.DefaultMaxResponse),
		Connections:   4096,
		HeaderTimeout: 10 * time.Second,
		BodyTimeout:   30 * time.Second,
		HookProcs:     8,       // command.DefaultMaxProcs
		RunsBytes:     8 << 20, // server.DefaultRunsBytes
		TenantStreams: 16,      // server.DefaultTenantStreams
	}
}
