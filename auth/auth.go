// Package auth holds who may talk to warden (docs/security.md): bearer tokens
// stored as their SHA-256, the scopes they grant and the tenant they belong
// to, and the server's TLS with the client certificates it lets in. Its
// config sections (auth:, origins:, tls:) are decoded by conf (config.go,
// tls.go); the server checks every request against them.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Scope is a set of permissions, a bit each.
type Scope uint8

// The scopes a token may hold.
const (
	// Decide: the deciding and forwarding surfaces (/aos, /mcp/*, /a2a/*,
	// POST /api/hooks/dispatch).
	Decide Scope = 1 << iota
	// Read: GET /api/*, the UI, /metrics.
	Read
	// Approve: acting on approvals (a later issue).
	Approve
	// Admin: everything.
	Admin
	// Unseal: seeing the sealed originals of redacted values (decision
	// pages, diffs, the runs API with unseal=1); every unseal is recorded
	// (package unseal). Approve sees those of the approvals it may decide.
	Unseal
)

var scopeNames = []struct {
	s    Scope
	name string
}{{Decide, "decide"}, {Read, "read"}, {Approve, "approve"}, {Admin, "admin"}, {Unseal, "unseal"}}

// ScopeNames are the scope names, in order.
func ScopeNames() []string {
	out := make([]string, len(scopeNames))
	for i, n := range scopeNames {
		out[i] = n.name
	}
	return out
}

// ParseScope returns the scope named name.
func ParseScope(name string) (Scope, error) {
	for _, n := range scopeNames {
		if n.name == name {
			return n.s, nil
		}
	}
	return 0, fmt.Errorf("unknown scope %q (want %s)", name, strings.Join(ScopeNames(), ", "))
}

// ParseScopes returns the union of the comma-separated scope names in s.
func ParseScopes(s string) (Scope, error) {
	var out Scope
	for _, name := range strings.Split(s, ",") {
		sc, err := ParseScope(strings.TrimSpace(name))
		if err != nil {
			return 0, err
		}
		out |= sc
	}
	return out, nil
}

// Allows reports whether s grants need: admin grants everything.
func (s Scope) Allows(need Scope) bool { return s&Admin != 0 || s&need == need }

// String is the scope names joined with ",".
func (s Scope) String() string {
	var names []string
	for _, n := range scopeNames {
		if s&n.s != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// Token is one configured bearer token (an entry of auth.tokens): warden
// keeps only its SHA-256.
type Token struct {
	Name   string `yaml:"name"`
	SHA256 Sum    `yaml:"sha256" conf:"required"`
	Scopes Scope  `yaml:"scopes"`
	Tenant string `yaml:"tenant"`
	// Plaintext is never set: a token written in clear (token:) is
	// refused, the config holds its sha256.
	Plaintext plaintext `yaml:"token"`
}

// Config is the auth: section of the config file (Validate in config.go).
// Its zero value is no auth: every surface is open.
//
// Once a Config is in use, read it through its methods: Replace may put
// other credentials in force at any time (a reload), and the methods read
// them under a lock.
type Config struct {
	Tokens []Token `yaml:"tokens"`
	// Clients map verified client-certificate subjects to scopes
	// (auth.clients, with tls.client_ca).
	Clients []Client `yaml:"clients"`

	changed chan struct{} // closed by the next Replace (Changed); under live
}

// live guards the Tokens and Clients of every Config against Replace. It is
// written only on a reload, and readers do not block each other.
var live sync.RWMutex

// Replace puts next's tokens and clients in force in c: every request
// checked from then on (a bearer token, a client certificate, a console
// session of a token) is checked against them; a removed token, and the
// sessions of a removed or rehashed token, stop working at once. It
// returns what changed. The slices are taken as they are and must not be
// modified afterwards.
func (c *Config) Replace(next Config) Changes {
	live.Lock()
	defer live.Unlock()
	ch := diff(Config{Tokens: c.Tokens, Clients: c.Clients}, next)
	c.Tokens, c.Clients = next.Tokens, next.Clients
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	return ch
}

// Changed returns a channel closed by the next Replace of c: a request
// that outlives its check (a stream) checks its credential again then.
func (c *Config) Changed() <-chan struct{} {
	live.Lock()
	defer live.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// Snapshot returns the credentials in force (the slices are shared; they
// are never modified, only replaced).
func (c *Config) Snapshot() Config {
	if c == nil {
		return Config{}
	}
	live.RLock()
	defer live.RUnlock()
	return Config{Tokens: c.Tokens, Clients: c.Clients}
}

// Changes names what a Replace changed: tokens by name, clients by
// subject (never a token or its hash). Changed are those kept under the
// same name with another hash, scopes or tenant.
type Changes struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (ch Changes) Empty() bool {
	return len(ch.Added) == 0 && len(ch.Removed) == 0 && len(ch.Changed) == 0
}

// diff compares two sets of credentials: "token NAME", "client SUBJECT".
func diff(old, next Config) Changes {
	var ch Changes
	type entry struct {
		key string
		val any
	}
	var before, after []entry
	for _, t := range old.Tokens {
		before = append(before, entry{"token " + t.Name, t})
	}
	for _, cl := range old.Clients {
		before = append(before, entry{"client " + cl.Subject, cl})
	}
	for _, t := range next.Tokens {
		after = append(after, entry{"token " + t.Name, t})
	}
	for _, cl := range next.Clients {
		after = append(after, entry{"client " + cl.Subject, cl})
	}
	find := func(list []entry, key string) (entry, bool) {
		for _, e := range list {
			if e.key == key {
				return e, true
			}
		}
		return entry{}, false
	}
	for _, a := range after {
		b, ok := find(before, a.key)
		switch {
		case !ok:
			ch.Added = append(ch.Added, a.key)
		case b.val != a.val:
			ch.Changed = append(ch.Changed, a.key)
		}
	}
	for _, b := range before {
		if _, ok := find(after, b.key); !ok {
			ch.Removed = append(ch.Removed, b.key)
		}
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Removed)
	slices.Sort(ch.Changed)
	return ch
}

// Client is a client certificate allowed in: the subject of a certificate
// the configured CA verified (pkix.Name's string form, e.g.
// "CN=payments-agent,O=Acme"), its scopes and tenant.
type Client struct {
	Subject string `yaml:"subject"`
	Scopes  Scope  `yaml:"scopes"`
	Tenant  string `yaml:"tenant"`
}

// Enabled reports whether any credential is configured.
func (c *Config) Enabled() bool {
	if c == nil {
		return false
	}
	live.RLock()
	defer live.RUnlock()
	return len(c.Tokens) > 0 || len(c.Clients) > 0
}

// LookupSubject returns the client entry for a verified certificate's
// subject (an exact match of the string form).
func (c *Config) LookupSubject(subject string) (Client, bool) {
	if c == nil || subject == "" {
		return Client{}, false
	}
	live.RLock()
	defer live.RUnlock()
	for _, cl := range c.Clients {
		if cl.Subject == subject {
			return cl, true
		}
	}
	return Client{}, false
}

// Lookup returns the token whose SHA-256 is that of bearer. It hashes
// bearer once and compares the hash with every configured token in
// constant time, without stopping at a match, so neither the time taken
// nor an early exit tells which entry (or how much of one) matched.
func (c *Config) Lookup(bearer string) (Token, bool) {
	if c == nil || bearer == "" {
		return Token{}, false
	}
	sum := sha256.Sum256([]byte(bearer))
	live.RLock()
	tokens := c.Tokens
	live.RUnlock()
	found := -1
	for i := range tokens {
		eq := subtle.ConstantTimeCompare(sum[:], tokens[i].SHA256[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return Token{}, false
	}
	return tokens[found], true
}

// TokenPrefix starts every token NewToken makes, so a leaked one is easy to
// recognize (and to scan for).
const TokenPrefix = "wdn_"

// NewToken returns a fresh random token (32 bytes from crypto/rand,
// base64url after TokenPrefix) and its SHA-256 in hex, as auth.tokens holds
// it.
func NewToken() (token, sum string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("reading random bytes: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, Hash(token), nil
}

// Hash is the hex SHA-256 of token, as auth.tokens holds it.
func Hash(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// ParseHash reads a hex SHA-256 (64 hex digits, either case).
func ParseHash(s string) ([sha256.Size]byte, error) {
	var out [sha256.Size]byte
	if len(s) != 2*sha256.Size {
		return out, fmt.Errorf("expected the token's sha256 as 64 hex digits, got %d characters", len(s))
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, fmt.Errorf("expected the token's sha256 as 64 hex digits: %v", err)
	}
	return out, nil
}
