package config

import "time"

// Approvals is a placeholder until the approvals: section lands (merge).
type Approvals struct {
	Wait, TTL time.Duration
	URL       string
}
