package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Gateways is the gateways: section: the key that seals the MCP session ids
// and A2A task ids the gateways hand their clients (internal/sealid), so
// replicas sharing it continue each other's sessions.
type Gateways struct {
	// SessionKeys are AES-256 keys (32 bytes each; gateways.session_key, a
	// string or a list). Ids are sealed with the first and opened with
	// any (key rotation). None: a random key per process, so ids open on
	// the replica that minted them only. Secrets: String prints none.
	SessionKeys [][]byte
	// SessionMaxAge refuses an id older than this (gateways.session_max_age;
	// 1m..30d, default 24h): its client initializes a new session.
	SessionMaxAge time.Duration
}

// Defaults and bounds of the gateways: section.
const (
	DefaultSessionMaxAge = 24 * time.Hour
	minSessionMaxAge     = time.Minute
	maxSessionMaxAge     = 30 * 24 * time.Hour
	sessionKeySize       = 32
	sessionKeyHelp       = `"hex:<64 hex digits>", "base64:<32 bytes in base64>" or a 32-byte text, usually "${WARDEN_SESSION_KEY}"`
	maxSessionKeys       = 8
)

// DefaultGateways is the gateways: section of a config without one.
func DefaultGateways() Gateways { return Gateways{SessionMaxAge: DefaultSessionMaxAge} }

// String describes the section without its keys.
func (g Gateways) String() string {
	return fmt.Sprintf("gateways{session_keys: %d, session_max_age: %s}", len(g.SessionKeys), fmtDur(g.SessionMaxAge))
}

// GoString is String: %#v prints no key either.
func (g Gateways) GoString() string { return g.String() }

// parseGateways reads the gateways: section over the defaults.
func parseGateways(file string, v *yaml.Node) (Gateways, ErrorList) {
	g := DefaultGateways()
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "gateways: expected a mapping with session_key, session_max_age")
		return g, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "session_key":
			items := []*yaml.Node{n}
			if n.Kind == yaml.SequenceNode {
				items = n.Content
				if len(items) == 0 || len(items) > maxSessionKeys {
					add(n, "gateways.session_key: expected 1 to %d keys, got %d", maxSessionKeys, len(items))
					continue
				}
			}
			for j, it := range items {
				where := "gateways.session_key"
				if n.Kind == yaml.SequenceNode {
					where = fmt.Sprintf("gateways.session_key[%d]", j)
				}
				if it.Kind != yaml.ScalarNode {
					add(it, "%s: expected %s", where, sessionKeyHelp)
					continue
				}
				key, err := acsKey(it.Value)
				if err == nil && len(key) != sessionKeySize {
					err = fmt.Errorf("key material of %d bytes; want %d (AES-256)", len(key), sessionKeySize)
				}
				if err != nil {
					add(it, "%s: %v (want %s)", where, err, sessionKeyHelp)
					continue
				}
				g.SessionKeys = append(g.SessionKeys, key)
			}
		case "session_max_age":
			d, msg := boundedDuration(n, "gateways.session_max_age", minSessionMaxAge, maxSessionMaxAge, "24h")
			if msg != "" {
				add(n, "%s", msg)
				continue
			}
			g.SessionMaxAge = d
		default:
			add(k, "gateways: unknown key %q (want session_key, session_max_age)", k.Value)
		}
	}
	return g, errs
}
