package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/sigkey"
)

// ACS is the acs: section (docs/acs.md): the Agent Control Standard
// endpoint's keys, signature rule, replay and staleness windows, and the
// bound on deferred steps.
type ACS struct {
	// Keys are the input keying material of the HMAC-SHA256 session keys,
	// by signature key_id (acs.keys). They are secrets: never log them
	// (String and GoString print only the key ids).
	Keys map[string][]byte
	// RequireSignatures refuses an unsigned request (-32004); true by
	// default when keys are set (acs.require_signatures).
	RequireSignatures bool
	// SkewWindow bounds how far a request's timestamp may be from now
	// (acs.skew_window; 1s..1h, default 5m, the spec's 300000 ms).
	SkewWindow time.Duration
	// ReplayWindow is how long a request_id (or nonce) is remembered per
	// session (acs.replay_window; at least the skew window, at most 24h,
	// default 10m).
	ReplayWindow time.Duration
	// RequireProvenance refuses a session whose ClientHello declares
	// provenance_producer "none" (-32002 PROVENANCE_REQUIRED;
	// acs.require_provenance, default false).
	RequireProvenance bool
	// DeferMaxPerSession bounds the deferred steps pending in one session
	// (acs.defer.max_per_session; 1..1000, default 3).
	DeferMaxPerSession int
	// Signing is the asymmetric algorithm (ACS-Crypto) that signs every
	// answer and the trace's retention checkpoints (acs.signing:
	// ml-dsa-65 or slh-dsa-128s; "" for none). SigningKey is its private
	// key, read from the file acs.signing_key names (SigningKeyFile,
	// resolved against the config file's directory) when the config is
	// loaded; a secret, never printed.
	Signing        sigkey.Alg
	SigningKeyFile string
	SigningKey     *sigkey.PrivateKey
	// PublicKeys verify requests the clients sign with ML-DSA-65 or
	// SLH-DSA-128s, by signature key_id (acs.public_keys: {key_id: FILE},
	// each file as `warden keys new` writes a .pub).
	PublicKeys map[string]*sigkey.PublicKey
}

// Defaults of the acs: section.
const (
	DefaultACSSkew        = 5 * time.Minute
	DefaultACSReplay      = 10 * time.Minute
	DefaultACSDeferMax    = 3
	minACSKeyBytes        = 16
	acsKeysHelp           = `"<text>", "hex:<hex>" or "base64:<base64>", at least 16 bytes`
	acsSectionKeys        = "keys, require_signatures, require_provenance, skew_window, replay_window, defer, signing, signing_key, public_keys"
	maxACSWindow          = 24 * time.Hour
	maxACSSkew            = time.Hour
	maxACSDeferPerSession = 1000
)

// DefaultACS is the acs section of a config that has none: no keys (so
// no signatures required), the spec's skew window.
func DefaultACS() ACS {
	return ACS{SkewWindow: DefaultACSSkew, ReplayWindow: DefaultACSReplay, DeferMaxPerSession: DefaultACSDeferMax}
}

// KeyIDs returns the configured key ids, sorted.
func (a ACS) KeyIDs() []string {
	ids := make([]string, 0, len(a.Keys))
	for id := range a.Keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// String shows the section without its key material.
func (a ACS) String() string {
	pub := make([]string, 0, len(a.PublicKeys))
	for id := range a.PublicKeys {
		pub = append(pub, id)
	}
	sort.Strings(pub)
	return fmt.Sprintf("acs{keys: %v, require_signatures: %v, require_provenance: %v, skew_window: %s, replay_window: %s, defer.max_per_session: %d, signing: %q, signing_key: %q, public_keys: %v}",
		a.KeyIDs(), a.RequireSignatures, a.RequireProvenance, a.SkewWindow, a.ReplayWindow, a.DeferMaxPerSession, a.Signing, a.SigningKeyFile, pub)
}

// GoString is String: %#v must not print the keys either.
func (a ACS) GoString() string { return a.String() }

// parseACS reads the acs: section over the defaults.
func parseACS(file string, v *yaml.Node) (ACS, ErrorList) {
	a := DefaultACS()
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "acs: expected a mapping with %s", acsSectionKeys)
		return a, errs
	}
	requireSet := false
	var signingNode, keyNode *yaml.Node // acs.signing and acs.signing_key, for errors
	pubNodes := map[string]*yaml.Node{} // acs.public_keys' ids, for errors
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "keys":
			if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
				add(n, "acs.keys: expected a mapping of key ids to key material (%s)", acsKeysHelp)
				continue
			}
			a.Keys = map[string][]byte{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				id, kv := n.Content[j], n.Content[j+1]
				where := "acs.keys." + id.Value
				if !validName(id.Value) {
					add(id, "%s: a key id may hold letters, digits, '-', '_' and '.'", where)
					continue
				}
				if kv.Kind != yaml.ScalarNode {
					add(kv, "%s: expected %s", where, acsKeysHelp)
					continue
				}
				key, err := acsKey(kv.Value)
				if err != nil {
					add(kv, "%s: %v", where, err) // the message never holds the key
					continue
				}
				a.Keys[id.Value] = key
			}
		case "require_signatures":
			if err := n.Decode(&a.RequireSignatures); err != nil || n.Kind != yaml.ScalarNode {
				add(n, "acs.require_signatures: expected true or false")
			}
			requireSet = true
		case "require_provenance":
			if err := n.Decode(&a.RequireProvenance); err != nil || n.Kind != yaml.ScalarNode {
				add(n, "acs.require_provenance: expected true or false")
			}
		case "skew_window":
			if d, msg := boundedDuration(n, "acs.skew_window", time.Second, maxACSSkew, "30s"); msg != "" {
				add(n, "%s", msg)
			} else {
				a.SkewWindow = d
			}
		case "replay_window":
			if d, msg := boundedDuration(n, "acs.replay_window", time.Second, maxACSWindow, "10m"); msg != "" {
				add(n, "%s", msg)
			} else {
				a.ReplayWindow = d
			}
		case "defer":
			if n.Kind != yaml.MappingNode {
				add(n, "acs.defer: expected {max_per_session: N}")
				continue
			}
			for j := 0; j+1 < len(n.Content); j += 2 {
				dk, dv := n.Content[j], n.Content[j+1]
				if dk.Value != "max_per_session" {
					add(dk, "acs.defer: unknown key %q (want max_per_session)", dk.Value)
					continue
				}
				var m int
				if err := dv.Decode(&m); err != nil || m < 1 || m > maxACSDeferPerSession {
					add(dv, "acs.defer.max_per_session: expected an integer in 1..%d, got %q", maxACSDeferPerSession, dv.Value)
					continue
				}
				a.DeferMaxPerSession = m
			}
		case "signing":
			alg, err := sigkey.ParseAlg(n.Value)
			if n.Kind != yaml.ScalarNode || err != nil || alg == sigkey.Ed25519 {
				add(n, "acs.signing: expected %s or %s, got %q", sigkey.MLDSA65, sigkey.SLHDSA128s, n.Value)
				continue
			}
			a.Signing, signingNode = alg, n
		case "signing_key":
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				add(n, "acs.signing_key: expected the path of a private key file (warden keys new)")
				continue
			}
			a.SigningKeyFile, keyNode = configPath(file, n.Value), n
		case "public_keys":
			if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
				add(n, "acs.public_keys: expected a mapping of key ids to public key files (warden keys new writes them: PREFIX.pub)")
				continue
			}
			a.PublicKeys = map[string]*sigkey.PublicKey{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				id, kv := n.Content[j], n.Content[j+1]
				where := "acs.public_keys." + id.Value
				switch {
				case !validName(id.Value):
					add(id, "%s: a key id may hold letters, digits, '-', '_' and '.'", where)
				case kv.Kind != yaml.ScalarNode || kv.Value == "":
					add(kv, "%s: expected the path of a public key file", where)
				default:
					pk, err := sigkey.LoadPublicKey(configPath(file, kv.Value))
					if err != nil {
						add(kv, "%s: %v", where, err)
						continue
					}
					if pk.Alg() == sigkey.Ed25519 {
						add(kv, "%s: an Ed25519 key; ACS requests are verified with %s or %s keys", where, sigkey.MLDSA65, sigkey.SLHDSA128s)
						continue
					}
					a.PublicKeys[id.Value], pubNodes[id.Value] = pk, id
				}
			}
		default:
			add(k, "acs: unknown key %q (want %s)", k.Value, acsSectionKeys)
		}
	}
	for _, id := range a.KeyIDs() {
		if n := pubNodes[id]; n != nil {
			add(n, "acs.public_keys.%s: the key id is also in acs.keys; a key id names one key", id)
		}
	}
	switch {
	case signingNode != nil && keyNode == nil:
		add(signingNode, "acs.signing: %s needs acs.signing_key, the private key file (warden keys new --alg %s)", a.Signing, a.Signing)
	case signingNode == nil && keyNode != nil:
		add(keyNode, "acs.signing_key: needs acs.signing (%s or %s), the key's algorithm", sigkey.MLDSA65, sigkey.SLHDSA128s)
	case signingNode != nil:
		key, err := sigkey.LoadPrivateKey(a.SigningKeyFile)
		switch {
		case err != nil:
			add(keyNode, "acs.signing_key: %v", err) // never holds the key
		case key.Alg() != a.Signing:
			add(keyNode, "acs.signing_key: %s holds an %s key, but acs.signing is %s", a.SigningKeyFile, key.Alg(), a.Signing)
		default:
			a.SigningKey = key
		}
	}
	if len(a.PublicKeys) > 0 && a.SigningKey == nil && signingNode == nil {
		add(v, "acs.public_keys: needs acs.signing and acs.signing_key: the answers to requests signed with a public key are signed with warden's own key")
	}
	if !requireSet {
		a.RequireSignatures = len(a.Keys) > 0 || len(a.PublicKeys) > 0
	}
	if a.RequireSignatures && len(a.Keys) == 0 && len(a.PublicKeys) == 0 {
		add(v, "acs.require_signatures: true needs acs.keys or acs.public_keys (the keys the signatures are checked with)")
	}
	if a.ReplayWindow < a.SkewWindow {
		add(v, "acs.replay_window (%s) must be at least acs.skew_window (%s): a request inside the skew window must still be remembered", fmtDur(a.ReplayWindow), fmtDur(a.SkewWindow))
	}
	return a, errs
}

// acsKey decodes key material: ${VAR} expanded, then "hex:…", "base64:…"
// or the string's UTF-8 bytes; at least 16 bytes.
func acsKey(s string) ([]byte, error) {
	s, err := hooks.ExpandEnv(s)
	if err != nil {
		return nil, err
	}
	var key []byte
	switch {
	case strings.HasPrefix(s, "hex:"):
		if key, err = hex.DecodeString(strings.TrimPrefix(s, "hex:")); err != nil {
			return nil, fmt.Errorf("hex: not valid hexadecimal")
		}
	case strings.HasPrefix(s, "base64:"):
		b := strings.TrimPrefix(s, "base64:")
		if key, err = base64.StdEncoding.DecodeString(b); err != nil {
			if key, err = base64.RawStdEncoding.DecodeString(b); err != nil {
				return nil, fmt.Errorf("base64: not valid base64")
			}
		}
	default:
		key = []byte(s)
	}
	if len(key) < minACSKeyBytes {
		return nil, fmt.Errorf("key material of %d bytes; want at least %d", len(key), minACSKeyBytes)
	}
	return key, nil
}

// configPath resolves p against the directory of the config file.
func configPath(file, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}
