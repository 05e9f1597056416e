// Package sigkey holds warden's asymmetric signing keys: ML-DSA-65
// (FIPS 204) and SLH-DSA-SHA2-128s (FIPS 205), with cloudflare/circl, for
// the ACS-Crypto profile (ACS responses and requests) and the trace's
// retention checkpoints; and Ed25519 public keys, which older checkpoints
// carry. It reads and writes the key files of `warden keys new`
// (docs/acs.md, "Key files"):
//
//   - a public key file is one line, the algorithm's name, a colon and
//     the standard base64 (with padding) of the public key's FIPS
//     encoding: "ml-dsa-65:MIIH…=\n";
//   - a private key file is a PEM block whose type is the algorithm's
//     ACS name followed by " PRIVATE KEY" ("ML-DSA-65 PRIVATE KEY"): for
//     ML-DSA-65 the 32-byte key-generation seed ξ of FIPS 204, for
//     SLH-DSA-128s the 64-byte private key SK.seed‖SK.prf‖PK.seed‖PK.root
//     of FIPS 205. It must not be readable by group or others.
//
// Signatures are the pure (not pre-hash) FIPS 204/205 signatures with an
// empty context string; ML-DSA signs hedged (randomized), SLH-DSA
// randomized. A key's id (KeyID) is the lowercase hex of the first 16
// bytes of the SHA-256 of its public key's FIPS encoding.
package sigkey

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/slhdsa"
)

// Alg is a signature algorithm, by the name warden's configuration and key
// files use.
type Alg string

// The algorithms.
const (
	// MLDSA65 is ML-DSA-65 (FIPS 204): ACS-Crypto's required algorithm.
	MLDSA65 Alg = "ml-dsa-65"
	// SLHDSA128s is SLH-DSA-SHA2-128s (FIPS 205), ACS's SLH-DSA-128s.
	SLHDSA128s Alg = "slh-dsa-128s"
	// Ed25519 (RFC 8032) is verify-only here: the key older retention
	// checkpoints are signed with.
	Ed25519 Alg = "ed25519"
)

// SigningAlgs are the algorithms Generate and a private key file support.
var SigningAlgs = []Alg{MLDSA65, SLHDSA128s}

// slhID is the SLH-DSA parameter set behind SLH-DSA-128s: ACS's registry
// names no hash family; warden uses the SHA2 one.
const slhID = slhdsa.SHA2_128s

// ParseAlg returns the algorithm s names: warden's name ("ml-dsa-65") or
// the ACS one ("ML-DSA-65"), in any case.
func ParseAlg(s string) (Alg, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case string(MLDSA65):
		return MLDSA65, nil
	case string(SLHDSA128s), "slh-dsa-sha2-128s":
		return SLHDSA128s, nil
	case string(Ed25519):
		return Ed25519, nil
	}
	return "", fmt.Errorf("unknown signature algorithm %q (expected %s or %s)", clip(s), MLDSA65, SLHDSA128s)
}

// ACSName is the algorithm's name in ACS's registry (§10.1), the
// signature envelope's algorithm.
func (a Alg) ACSName() string {
	switch a {
	case MLDSA65:
		return "ML-DSA-65"
	case SLHDSA128s:
		return "SLH-DSA-128s"
	case Ed25519:
		return "Ed25519"
	}
	return string(a)
}

// FromACSName is the algorithm of an ACS signature envelope's algorithm,
// matched exactly (ACS names are case-sensitive); false for one warden
// does not verify asymmetrically.
func FromACSName(s string) (Alg, bool) {
	switch s {
	case "ML-DSA-65":
		return MLDSA65, true
	case "SLH-DSA-128s":
		return SLHDSA128s, true
	}
	return "", false
}

// PublicKey verifies signatures of one algorithm.
type PublicKey struct {
	alg Alg
	raw []byte
	ml  *mldsa65.PublicKey
	slh *slhdsa.PublicKey
}

// NewPublicKey returns the alg public key whose FIPS (or RFC 8032)
// encoding is raw.
func NewPublicKey(alg Alg, raw []byte) (*PublicKey, error) {
	p := &PublicKey{alg: alg, raw: append([]byte(nil), raw...)}
	switch alg {
	case MLDSA65:
		if len(raw) != mldsa65.PublicKeySize {
			return nil, fmt.Errorf("an %s public key is %d bytes, not %d", alg, mldsa65.PublicKeySize, len(raw))
		}
		p.ml = new(mldsa65.PublicKey)
		if err := p.ml.UnmarshalBinary(raw); err != nil {
			return nil, fmt.Errorf("not an %s public key: %v", alg, err)
		}
	case SLHDSA128s:
		k := slhdsa.PublicKey{ID: slhID}
		if err := k.UnmarshalBinary(raw); err != nil {
			return nil, fmt.Errorf("not an %s public key (%d bytes): %v", alg, len(raw), err)
		}
		p.slh = &k
	case Ed25519:
		if len(raw) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("an ed25519 public key is %d bytes, not %d", ed25519.PublicKeySize, len(raw))
		}
	default:
		return nil, fmt.Errorf("unknown signature algorithm %q", clip(string(alg)))
	}
	return p, nil
}

// Alg is the key's algorithm.
func (p *PublicKey) Alg() Alg { return p.alg }

// Bytes is the key's FIPS (or RFC 8032) encoding; the caller must not
// change it.
func (p *PublicKey) Bytes() []byte { return p.raw }

// KeyID is the key's id: the lowercase hex of the first 16 bytes of the
// SHA-256 of Bytes.
func (p *PublicKey) KeyID() string {
	h := sha256.Sum256(p.raw)
	return hex.EncodeToString(h[:16])
}

// Equal reports whether q is the same key.
func (p *PublicKey) Equal(q *PublicKey) bool {
	return p != nil && q != nil && p.alg == q.alg && bytes.Equal(p.raw, q.raw)
}

// Verify reports whether sig is the key's signature of msg.
func (p *PublicKey) Verify(msg, sig []byte) bool {
	switch p.alg {
	case MLDSA65:
		return len(sig) == mldsa65.SignatureSize && mldsa65.Verify(p.ml, msg, nil, sig)
	case SLHDSA128s:
		return slhdsa.Verify(p.slh, slhdsa.NewMessage(msg), sig, nil)
	case Ed25519:
		return len(sig) == ed25519.SignatureSize && ed25519.Verify(ed25519.PublicKey(p.raw), msg, sig)
	}
	return false
}

// MarshalText is the key's public key file: "alg:base64", no newline.
func (p *PublicKey) MarshalText() ([]byte, error) {
	return []byte(string(p.alg) + ":" + base64.StdEncoding.EncodeToString(p.raw)), nil
}

// String is MarshalText's text.
func (p *PublicKey) String() string { b, _ := p.MarshalText(); return string(b) }

// MaxFileSize bounds a key file read (a public key file of SLH-DSA or
// ML-DSA is at most a few KiB).
const MaxFileSize = 64 << 10

// ParsePublicKey parses a public key file: "alg:base64" (surrounding
// space ignored), or, for Ed25519 (the key `warden verify` prints for
// older checkpoints), the key's 64 hex digits alone.
func ParsePublicKey(text []byte) (*PublicKey, error) {
	if len(text) > MaxFileSize {
		return nil, fmt.Errorf("longer than %d bytes: not a public key file", MaxFileSize)
	}
	s := strings.TrimSpace(string(text))
	if strings.HasPrefix(s, "-----BEGIN") {
		return nil, errors.New(`a PEM block, not a public key: give the ".pub" file warden keys new wrote (a private key is never needed to verify)`)
	}
	name, b64, ok := strings.Cut(s, ":")
	if !ok {
		if raw, err := hex.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
			return NewPublicKey(Ed25519, raw)
		}
		return nil, fmt.Errorf(`not a public key: expected "ml-dsa-65:BASE64" or "slh-dsa-128s:BASE64" (as warden keys new writes it), or %d hex digits of an Ed25519 key`, 2*ed25519.PublicKeySize)
	}
	alg, err := ParseAlg(name)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("the %s public key is not standard base64: %v", alg, err)
	}
	return NewPublicKey(alg, raw)
}

// PrivateKey signs with one algorithm; it never appears in logs or
// errors.
type PrivateKey struct {
	alg  Alg
	seed []byte // what the key file holds
	ml   *mldsa65.PrivateKey
	slh  *slhdsa.PrivateKey
	pub  *PublicKey
}

// Generate returns a new alg key from random (nil: crypto/rand).
func Generate(alg Alg, random io.Reader) (*PrivateKey, error) {
	if random == nil {
		random = rand.Reader
	}
	var n int
	switch alg {
	case MLDSA65:
		n = mldsa65.SeedSize
	case SLHDSA128s:
		_, sk, err := slhdsa.GenerateKey(random, slhID)
		if err != nil {
			return nil, fmt.Errorf("generating an %s key: %v", alg, err)
		}
		raw, err := sk.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encoding an %s key: %v", alg, err)
		}
		return newPrivateKey(alg, raw)
	default:
		return nil, fmt.Errorf("cannot generate a %q key (expected %s or %s)", clip(string(alg)), MLDSA65, SLHDSA128s)
	}
	seed := make([]byte, n)
	if _, err := io.ReadFull(random, seed); err != nil {
		return nil, fmt.Errorf("generating an %s key: %v", alg, err)
	}
	return newPrivateKey(alg, seed)
}

// newPrivateKey builds the alg key from what its file holds.
func newPrivateKey(alg Alg, seed []byte) (*PrivateKey, error) {
	k := &PrivateKey{alg: alg, seed: append([]byte(nil), seed...)}
	switch alg {
	case MLDSA65:
		if len(seed) != mldsa65.SeedSize {
			return nil, fmt.Errorf("an %s private key (seed) is %d bytes, not %d", alg, mldsa65.SeedSize, len(seed))
		}
		var s [mldsa65.SeedSize]byte
		copy(s[:], seed)
		pk, sk := mldsa65.NewKeyFromSeed(&s)
		k.ml = sk
		k.pub = &PublicKey{alg: alg, raw: pk.Bytes(), ml: pk}
	case SLHDSA128s:
		sk := slhdsa.PrivateKey{ID: slhID}
		if err := sk.UnmarshalBinary(seed); err != nil {
			return nil, fmt.Errorf("not an %s private key (%d bytes)", alg, len(seed))
		}
		k.slh = &sk
		pk := sk.PublicKey()
		raw, err := pk.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encoding an %s public key: %v", alg, err)
		}
		k.pub = &PublicKey{alg: alg, raw: raw, slh: &pk}
	default:
		return nil, fmt.Errorf("unknown signing algorithm %q", clip(string(alg)))
	}
	return k, nil
}

// Alg is the key's algorithm.
func (k *PrivateKey) Alg() Alg { return k.alg }

// Public is the key's public key.
func (k *PrivateKey) Public() *PublicKey { return k.pub }

// KeyID is the public key's id.
func (k *PrivateKey) KeyID() string { return k.pub.KeyID() }

// Sign returns the key's signature of msg.
func (k *PrivateKey) Sign(msg []byte) ([]byte, error) {
	switch k.alg {
	case MLDSA65:
		sig := make([]byte, mldsa65.SignatureSize)
		if err := mldsa65.SignTo(k.ml, msg, nil, true, sig); err != nil {
			return nil, fmt.Errorf("%s sign: %v", k.alg, err)
		}
		return sig, nil
	case SLHDSA128s:
		sig, err := slhdsa.SignRandomized(k.slh, rand.Reader, slhdsa.NewMessage(msg), nil)
		if err != nil {
			return nil, fmt.Errorf("%s sign: %v", k.alg, err)
		}
		return sig, nil
	}
	return nil, fmt.Errorf("unknown signing algorithm %q", clip(string(k.alg)))
}

// pemType is the PEM block type of an alg private key file.
func pemType(alg Alg) string { return alg.ACSName() + " PRIVATE KEY" }

// MarshalPrivate is the key's private key file (PEM).
func (k *PrivateKey) MarshalPrivate() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemType(k.alg), Bytes: k.seed})
}

// ParsePrivateKey parses a private key file (one PEM block).
func ParsePrivateKey(text []byte) (*PrivateKey, error) {
	if len(text) > MaxFileSize {
		return nil, fmt.Errorf("longer than %d bytes: not a private key file", MaxFileSize)
	}
	b, rest := pem.Decode(text)
	if b == nil {
		if _, err := ParsePublicKey(text); err == nil {
			return nil, errors.New("a public key, not a private key: give the file warden keys new wrote without the .pub suffix")
		}
		return nil, errors.New(`not a private key file: expected a PEM block "ML-DSA-65 PRIVATE KEY" or "SLH-DSA-128s PRIVATE KEY" (as warden keys new writes it)`)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("more than one PEM block: a private key file holds one key")
	}
	if len(b.Headers) != 0 {
		return nil, errors.New("an encrypted or annotated PEM block (headers): warden reads the plain key warden keys new writes")
	}
	for _, alg := range SigningAlgs {
		if b.Type == pemType(alg) {
			return newPrivateKey(alg, b.Bytes)
		}
	}
	return nil, fmt.Errorf(`a PEM block of type %q, not "ML-DSA-65 PRIVATE KEY" or "SLH-DSA-128s PRIVATE KEY"`, clip(b.Type))
}

// clip bounds a string quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
