package approval

import (
	"net/url"
	"strings"
	"time"

	"github.com/wardenhq/warden/conf"
)

// Config is the approvals: section (docs/approvals.md) without its
// notify: list, which package notify reads: how long a step that asks
// waits for a human, and where the console is.
type Config struct {
	// Wait is how long the surfaces that hold a call (MCP, A2A, hooks
	// dispatch) hold it for a decision before denying it with
	// approval_timeout (approvals.wait; 1s..15m, default DefaultWait).
	Wait time.Duration `yaml:"wait" conf:"days" range:"1s..15m"`
	// TTL is how long after an approval an AOS step answered at once may
	// be retried, once (approvals.ttl; 1s..24h, default DefaultTTL).
	TTL time.Duration `yaml:"ttl" conf:"days" range:"1s..24h"`
	// URL is the console's external base URL for links in notifications,
	// without a trailing slash; "" when not configured (approvals.url).
	URL string `yaml:"url" conf:"env,url"`
}

// DefaultConfig is the approvals section of a config that has none.
func DefaultConfig() Config {
	return Config{Wait: DefaultWait, TTL: DefaultTTL}
}

// Validate wants a base URL (no user info, query or fragment) and drops
// its trailing slash.
func (c *Config) Validate() error {
	if c.URL == "" {
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return conf.Errorf("url", "expected an http(s) URL")
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// Not quoted: the value may hold a ${VAR}'s secret.
		return conf.Errorf("url", "expected a base URL without user info, query or fragment")
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return nil
}
