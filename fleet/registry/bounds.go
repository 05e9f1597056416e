package registry

import "time"

// The defaults of a replica's registration (config instance:,
// docs/scaling.md): a heartbeat every DefaultHeartbeat; an instance is
// stale after DefaultStale heartbeats unseen.
const (
	DefaultHeartbeat = 5 * time.Second
	DefaultStale     = 3
)
