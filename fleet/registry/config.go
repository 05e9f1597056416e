package registry

import (
	"time"

	"github.com/wardenhq/warden/conf"
)

// Config is the config's instance: section (docs/scaling.md): how this
// replica names itself in the registry (GET /api/instances).
type Config struct {
	// ID is instance.id, ${VAR}s expanded; "" means hostname:port.
	ID string `yaml:"id" conf:"env"`
	// Heartbeat is how often the replica registers itself
	// (DefaultHeartbeat).
	Heartbeat time.Duration `yaml:"heartbeat" range:"100ms..10m"`
	// Stale is after how many missed heartbeats a replica is shown stale
	// (DefaultStale).
	Stale int `yaml:"stale" range:"1..1000"`
}

// maxConfigID bounds instance.id, in bytes (within MaxField).
const maxConfigID = 255

// DefaultConfig is the instance section of a config without one.
func DefaultConfig() Config {
	return Config{Heartbeat: DefaultHeartbeat, Stale: DefaultStale}
}

// Validate wants an ID of printable characters within maxConfigID.
func (c *Config) Validate() error {
	if len(c.ID) > maxConfigID || !printable(c.ID) {
		return conf.Errorf("id", "expected up to %d printable characters", maxConfigID)
	}
	return nil
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
