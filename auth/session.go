package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/keyfile"
)

// Console sessions: a browser signs in once with a token and then carries
// a cookie that stands for it. The cookie does not hold the token:
//
//	v1.<token name, base64url>.<expiry, unix seconds>.<HMAC-SHA256, base64url>
//
// The MAC covers the name, the expiry and the token's configured SHA-256,
// keyed by SessionKeyFile in the data directory. So a session survives a
// restart, and ends when it expires, when its token is removed from
// auth.tokens or given another hash, or when the key file is removed. The
// name is base64url-encoded because token names may hold any character.
const (
	// SessionCookie is the cookie's name.
	SessionCookie = "warden_session"
	// SessionTTL is how long a session lasts: 12 hours, then sign in again.
	SessionTTL = 12 * time.Hour
	// SessionKeyFile is the session key's file in the data directory
	// (SessionKeySize random bytes, mode 0600, created on first use).
	SessionKeyFile = "session.key"
	// SessionKeySize is the size of the session key in bytes.
	SessionKeySize = 32
	sessionVersion = "v1"
)

// LoadSessionKey returns the session key in dir, creating it when there is
// none (see package keyfile for the checks).
func LoadSessionKey(dir string) ([]byte, error) {
	return keyfile.Load(keyfile.Spec{Dir: dir, Name: SessionKeyFile, Size: SessionKeySize,
		What: "session key", Lost: "every console session then ends"})
}

// Sessions issues and checks console session cookies for the tokens of a
// Config. It is safe for concurrent use.
type Sessions struct {
	key []byte
	cfg *Config
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// NewSessions returns Sessions for cfg's tokens, keyed by key.
func NewSessions(key []byte, cfg *Config) *Sessions {
	return &Sessions{key: append([]byte(nil), key...), cfg: cfg}
}

func (s *Sessions) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Issue returns the cookie value of a new session of tok, and when it
// expires (SessionTTL from now, to the second).
func (s *Sessions) Issue(tok Token) (value string, expires time.Time) {
	expires = s.now().Add(SessionTTL).Truncate(time.Second)
	name := base64.RawURLEncoding.EncodeToString([]byte(tok.Name))
	exp := strconv.FormatInt(expires.Unix(), 10)
	return sessionVersion + "." + name + "." + exp + "." + s.mac(name, exp, tok.SHA256[:]), expires
}

// mac is the base64url HMAC-SHA256 of a session's name, expiry and token
// hash.
func (s *Sessions) mac(name, exp string, sum []byte) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(sessionVersion + "\x00" + name + "\x00" + exp + "\x00"))
	h.Write(sum)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Check returns the token a session cookie value stands for, with the
// token's current scopes and tenant; false for a value that is malformed,
// forged, expired, or whose token is no longer configured with the hash it
// was issued for (Config.Replace included: a reload ends the sessions of
// the tokens it removes or rehashes). The MAC is compared in constant time.
func (s *Sessions) Check(value string) (Token, bool) {
	if s == nil || len(value) > 1024 {
		return Token{}, false
	}
	parts := strings.Split(value, ".")
	if len(parts) != 4 || parts[0] != sessionVersion {
		return Token{}, false
	}
	name, exp, mac := parts[1], parts[2], parts[3]
	raw, err := base64.RawURLEncoding.DecodeString(name)
	if err != nil {
		return Token{}, false
	}
	tok, ok := s.cfg.byName(string(raw))
	// The MAC is computed and compared whether or not the name is known,
	// so the time taken does not tell.
	want := s.mac(name, exp, tok.SHA256[:])
	if !hmac.Equal([]byte(mac), []byte(want)) || !ok {
		return Token{}, false
	}
	sec, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(sec, 0)) {
		return Token{}, false
	}
	return tok, true
}

// byName returns the configured token named name.
func (c *Config) byName(name string) (Token, bool) {
	if c == nil {
		return Token{}, false
	}
	live.RLock()
	defer live.RUnlock()
	for _, t := range c.Tokens {
		if t.Name == name {
			return t, true
		}
	}
	return Token{}, false
}
