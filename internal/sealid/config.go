package sealid

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
)

// Config is the gateways: section of warden's configuration
// (docs/gateways.md "Several replicas"): the keys that seal the MCP session
// ids and A2A task ids the gateways hand their clients, so replicas sharing
// them continue each other's sessions, and the age past which an id is
// refused.
type Config struct {
	// SessionKeys are AES-256 keys (KeySize bytes each;
	// gateways.session_key, a string or a list of up to 8). Ids are sealed
	// with the first and opened with any (key rotation). None: a random key
	// per process, so ids open on the replica that minted them only.
	// Secrets: String prints none.
	SessionKeys []Key `yaml:"session_key" conf:"one"`
	// SessionMaxAge refuses an id older than this
	// (gateways.session_max_age; 1m..30d, default DefaultMaxAge): its
	// client initializes a new session.
	SessionMaxAge time.Duration `yaml:"session_max_age" range:"1m..30d" conf:"days"`
}

// maxKeys bounds gateways.session_key's list.
const maxKeys = 8

// keyHelp says how a key is written.
const keyHelp = `"hex:<64 hex digits>", "base64:<32 bytes in base64>" or a 32-byte text, usually "${WARDEN_SESSION_KEY}"`

// DefaultConfig is the gateways: section of a config without one.
func DefaultConfig() Config { return Config{SessionMaxAge: DefaultMaxAge} }

// Validate bounds the number of keys.
func (c *Config) Validate() error {
	if c.SessionKeys != nil && (len(c.SessionKeys) == 0 || len(c.SessionKeys) > maxKeys) {
		return conf.Errorf("session_key", "expected 1 to %d keys, got %d", maxKeys, len(c.SessionKeys))
	}
	return nil
}

// Sealer returns the Sealer of the section's keys and maximum age (New).
func (c Config) Sealer() (*Sealer, error) {
	keys := make([][]byte, len(c.SessionKeys))
	for i, k := range c.SessionKeys {
		keys[i] = k
	}
	return New(keys, c.SessionMaxAge)
}

// String describes the section without its keys.
func (c Config) String() string {
	return fmt.Sprintf("gateways{session_keys: %d, session_max_age: %s}", len(c.SessionKeys), c.SessionMaxAge)
}

// GoString is String: %#v prints no key either.
func (c Config) GoString() string { return c.String() }

// Key is an AES-256 key of gateways.session_key, decoded from its config
// value (conf.KeyMaterial). A secret: it prints as its size only.
type Key []byte

// UnmarshalConf decodes a key: KeySize bytes, written as keyHelp says.
func (k *Key) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected %s", keyHelp)
	}
	key, err := conf.KeyMaterial(n.Value)
	if err == nil && len(key) != KeySize {
		err = fmt.Errorf("key material of %d bytes; want %d (AES-256)", len(key), KeySize)
	}
	if err != nil {
		return fmt.Errorf("%w (want %s)", err, keyHelp) // never holds the key
	}
	*k = key
	return nil
}

// String prints the key's size, never the key.
func (k Key) String() string { return fmt.Sprintf("[%d-byte key]", len(k)) }

// GoString is String.
func (k Key) GoString() string { return k.String() }
