package acsstate

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/sigkey"
)

// Config is the acs: section of warden's configuration (docs/acs.md): the
// ACS endpoint's keys, signature rule, replay and staleness windows, and
// the bound on deferred steps. Decoded by conf; Validate then checks the
// rules across its keys and completes it (RequireSignatures, the key files
// read). It lives here, in the ACS feature's package, rather than in the
// surface acs: config, which the core imports, must not import a surface
// (arch_test.go).
type Config struct {
	// Keys are the input keying material of the HMAC-SHA256 session keys,
	// by signature key_id (acs.keys). They are secrets: never log them
	// (String and GoString print only the key ids).
	Keys HMACKeys `yaml:"keys"`
	// RequireSignaturesSet is acs.require_signatures as the file sets it
	// (nil: not set).
	RequireSignaturesSet *bool `yaml:"require_signatures"`
	// RequireSignatures refuses an unsigned request (-32004): what
	// acs.require_signatures says, else true when keys are set (acs.keys
	// or acs.public_keys). Validate sets it.
	RequireSignatures bool
	// RequireProvenance refuses a session whose ClientHello declares
	// provenance_producer "none" (-32002 PROVENANCE_REQUIRED;
	// acs.require_provenance, default false).
	RequireProvenance bool `yaml:"require_provenance"`
	// SkewWindow bounds how far a request's timestamp may be from now
	// (acs.skew_window; 1s..1h, default DefaultSkew, the spec's 300000 ms).
	SkewWindow time.Duration `yaml:"skew_window" range:"1s..1h" conf:"days"`
	// ReplayWindow is how long a request_id (or nonce) is remembered per
	// session (acs.replay_window; at least the skew window, at most 24h,
	// default DefaultReplay).
	ReplayWindow time.Duration `yaml:"replay_window" range:"1s..24h" conf:"days"`
	// Defer bounds the deferred steps (acs.defer).
	Defer DeferConfig `yaml:"defer"`
	// Signing is the asymmetric algorithm (ACS-Crypto) that signs every
	// answer and the trace's retention checkpoints (acs.signing:
	// ml-dsa-65 or slh-dsa-128s, any case; "" for none).
	Signing sigkey.Alg `yaml:"signing"`
	// SigningKeyFile is the file of Signing's private key
	// (acs.signing_key), resolved against Dir; Validate reads SigningKey
	// from it. SigningKey is a secret, never printed.
	SigningKeyFile KeyFile `yaml:"signing_key"`
	SigningKey     *sigkey.PrivateKey
	// PublicKeyFiles are the files (as `warden keys new` writes a .pub) of
	// the public keys that verify requests the clients sign with
	// ML-DSA-65 or SLH-DSA-128s, by signature key_id (acs.public_keys:
	// {key_id: FILE}), resolved against Dir; Validate reads PublicKeys
	// from them.
	PublicKeyFiles map[string]KeyFile `yaml:"public_keys"`
	PublicKeys     map[string]*sigkey.PublicKey
	// Dir is the directory relative key files are read from: the config
	// file's, set before the section is decoded.
	Dir string
}

// Defaults of the acs: section; the ACS endpoint (acs.Options) uses them
// for what it is not given.
const (
	DefaultSkew     = 5 * time.Minute
	DefaultReplay   = 10 * time.Minute
	DefaultDeferMax = 3
)

// DeferConfig is acs.defer.
type DeferConfig struct {
	// MaxPerSession bounds the deferred steps pending in one session
	// (acs.defer.max_per_session; 1..1000, default DefaultDeferMax).
	MaxPerSession int `yaml:"max_per_session" range:"1..1000"`
}

// DefaultConfig is the acs: section of a config that has none: no keys
// (so no signatures required), the spec's skew window.
func DefaultConfig() Config {
	return Config{SkewWindow: DefaultSkew, ReplayWindow: DefaultReplay, Defer: DeferConfig{MaxPerSession: DefaultDeferMax}}
}

// Validate checks the rules across the section's keys — the signing
// algorithm with its key, the public keys with warden's own, a key id
// named once, signatures required only with keys to check them, the replay
// window at least the skew window — and completes it: RequireSignatures
// set, Signing in its canonical spelling, SigningKey and PublicKeys read
// from their files.
func (c *Config) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, conf.Errorf(field, format, args...))
	}
	alg := c.Signing != ""
	if alg {
		a, err := sigkey.ParseAlg(string(c.Signing))
		if err != nil || a == sigkey.Ed25519 {
			add("signing", "expected %s or %s, got %q", sigkey.MLDSA65, sigkey.SLHDSA128s, c.Signing)
			alg = false
		} else {
			c.Signing = a
		}
	}
	switch {
	case alg && c.SigningKeyFile == "":
		add("signing", "%s needs acs.signing_key, the private key file (warden keys new --alg %s)", c.Signing, c.Signing)
	case c.Signing == "" && c.SigningKeyFile != "":
		add("signing_key", "needs acs.signing (%s or %s), the key's algorithm", sigkey.MLDSA65, sigkey.SLHDSA128s)
	case alg:
		c.SigningKeyFile = c.SigningKeyFile.in(c.Dir)
		key, err := sigkey.LoadPrivateKey(string(c.SigningKeyFile))
		switch {
		case err != nil:
			add("signing_key", "%v", err) // never holds the key
		case key.Alg() != c.Signing:
			add("signing_key", "%s holds an %s key, but acs.signing is %s", c.SigningKeyFile, key.Alg(), c.Signing)
		default:
			c.SigningKey = key
		}
	}
	if c.PublicKeyFiles != nil && len(c.PublicKeyFiles) == 0 {
		add("public_keys", "expected a mapping of key ids to public key files (warden keys new writes them: PREFIX.pub)")
	}
	c.PublicKeys = nil
	for _, id := range slices.Sorted(maps.Keys(c.PublicKeyFiles)) {
		where := "public_keys." + id
		if conf.CheckName(id) != nil {
			add(where, "a key id may hold letters, digits, '-', '_' and '.'")
			continue
		}
		file := c.PublicKeyFiles[id].in(c.Dir)
		c.PublicKeyFiles[id] = file
		pk, err := sigkey.LoadPublicKey(string(file))
		switch {
		case err != nil:
			add(where, "%v", err)
		case pk.Alg() == sigkey.Ed25519:
			add(where, "an Ed25519 key; ACS requests are verified with %s or %s keys", sigkey.MLDSA65, sigkey.SLHDSA128s)
		case c.Keys[id] != nil:
			add(where, "the key id is also in acs.keys; a key id names one key")
		default:
			if c.PublicKeys == nil {
				c.PublicKeys = map[string]*sigkey.PublicKey{}
			}
			c.PublicKeys[id] = pk
		}
	}
	if len(c.PublicKeys) > 0 && !alg {
		add("public_keys", "needs acs.signing and acs.signing_key: the answers to requests signed with a public key are signed with warden's own key")
	}
	keyed := len(c.Keys) > 0 || len(c.PublicKeys) > 0
	c.RequireSignatures = keyed
	if c.RequireSignaturesSet != nil {
		c.RequireSignatures = *c.RequireSignaturesSet
	}
	if c.RequireSignatures && !keyed {
		add("require_signatures", "true needs acs.keys or acs.public_keys (the keys the signatures are checked with)")
	}
	if c.ReplayWindow < c.SkewWindow {
		add("replay_window", "%s must be at least acs.skew_window (%s): a request inside the skew window must still be remembered",
			fmtDur(c.ReplayWindow), fmtDur(c.SkewWindow))
	}
	return errors.Join(errs...)
}

// KeyIDs returns the configured HMAC key ids, sorted.
func (c Config) KeyIDs() []string { return slices.Sorted(maps.Keys(c.Keys)) }

// String shows the section without its key material.
func (c Config) String() string {
	pub := slices.Sorted(maps.Keys(c.PublicKeys))
	return fmt.Sprintf("acs{keys: %v, require_signatures: %v, require_provenance: %v, skew_window: %s, replay_window: %s, defer.max_per_session: %d, signing: %q, signing_key: %q, public_keys: %v}",
		c.KeyIDs(), c.RequireSignatures, c.RequireProvenance, c.SkewWindow, c.ReplayWindow, c.Defer.MaxPerSession, c.Signing, c.SigningKeyFile, pub)
}

// GoString is String: %#v must not print the keys either.
func (c Config) GoString() string { return c.String() }

// minKeyBytes is the least key material of an acs.keys entry.
const minKeyBytes = 16

// keysHelp says how acs.keys' key material is written.
const keysHelp = `"<text>", "hex:<hex>" or "base64:<base64>", at least 16 bytes`

// HMACKeys are acs.keys: HMAC input keying material by key_id, each
// decoded from its config value (conf.KeyMaterial) and at least 16 bytes.
// Secrets: they print as their ids only.
type HMACKeys map[string][]byte

// UnmarshalConf decodes a non-empty mapping of key ids to key material.
// Its errors never hold a key.
func (k *HMACKeys) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return fmt.Errorf("expected a mapping of key ids to key material (%s)", keysHelp)
	}
	keys := HMACKeys{}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		id, v := n.Content[i].Value, n.Content[i+1]
		if _, ok := keys[id]; ok {
			errs = append(errs, conf.Errorf(id, "key %q appears twice", id))
			continue
		}
		if conf.CheckName(id) != nil {
			errs = append(errs, conf.Errorf(id, "a key id may hold letters, digits, '-', '_' and '.'"))
			continue
		}
		if v.Kind != yaml.ScalarNode {
			errs = append(errs, conf.Errorf(id, "expected %s", keysHelp))
			continue
		}
		key, err := conf.KeyMaterial(v.Value)
		if err == nil && len(key) < minKeyBytes {
			err = fmt.Errorf("key material of %d bytes; want at least %d", len(key), minKeyBytes)
		}
		if err != nil {
			errs = append(errs, conf.Errorf(id, "%v", err))
			continue
		}
		keys[id] = key
	}
	*k = keys
	return errors.Join(errs...)
}

// String prints the key ids, never the keys.
func (k HMACKeys) String() string { return fmt.Sprint(slices.Sorted(maps.Keys(k))) }

// GoString is String.
func (k HMACKeys) GoString() string { return k.String() }

// KeyFile is the path of a key file (acs.signing_key, acs.public_keys),
// relative to the config file's directory until Validate resolves it.
type KeyFile string

// UnmarshalConf takes a non-empty path.
func (f *KeyFile) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return errors.New("expected the path of a key file (warden keys new writes them)")
	}
	*f = KeyFile(n.Value)
	return nil
}

// in resolves f against dir.
func (f KeyFile) in(dir string) KeyFile {
	if f == "" || filepath.IsAbs(string(f)) {
		return f
	}
	return KeyFile(filepath.Join(dir, string(f)))
}

// fmtDur prints a window as it would be written: 10m rather than 10m0s.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
