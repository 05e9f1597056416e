// Package sealid seals the state a gateway needs to continue a session into
// the id its client echoes (an MCP Mcp-Session-Id, an A2A task id), so any
// replica holding the shared key continues the session and none trusts what
// the client sends without opening it.
//
// An id is base64url (no padding) of
//
//	version (1 byte, 1) | nonce (12 random bytes) | AES-256-GCM(issued | payload)
//
// where issued is the Unix time in seconds (8 bytes, big-endian) and the
// additional data binds the id to its kind, the gateway's server (or agent)
// name and the caller's tenant and name: an id minted for another server,
// tenant or caller, under another key, altered by one bit, truncated or
// older than the maximum age does not open.
//
// A stable id (SealStable, version 2) has no issue time and its nonce is
// derived — HMAC-SHA256 of the binding and the payload under a key derived
// from the sealing key, first 12 bytes — so one payload sealed for one
// binding is always the same id: an A2A task id must be, since a client
// correlates a task's events and answers by it. GCM is safe with such a
// nonce: it repeats only for the same additional data and plaintext, when
// the whole id repeats, which is the point; ids of different payloads
// collide on a nonce with the probability of a 96-bit HMAC collision.
// Stable ids do not expire: the task's life is the upstream's.
package sealid

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Version is the first byte of an id Seal mints; VersionStable of one
// SealStable mints.
const (
	Version       = 1
	VersionStable = 2
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// MaxIDLen bounds the text of an id Open looks at; longer is refused before
// it is decoded (an MCP session id or A2A task id the gateway mints is far
// shorter: ~50 bytes of overhead plus its payload in base64).
const MaxIDLen = 2048

// DefaultMaxAge is the age past which an id is refused when New is given none.
const DefaultMaxAge = 24 * time.Hour

// futureSkew is how far in the future an id's issue time may be (another
// replica's clock).
const futureSkew = 2 * time.Minute

const (
	nonceSize = 12
	tagSize   = 16
	headSize  = 1 + nonceSize
	issuedLen = 8
	minSealed = headSize + issuedLen + tagSize
	minStable = headSize + tagSize
)

// Errors of Open. Every refusal is ErrInvalid (callers need not tell a
// forged id from a foreign one), or ErrExpired for an authentic id that is
// too old.
var (
	ErrInvalid = errors.New("sealid: not an id this gateway minted")
	ErrExpired = errors.New("sealid: id too old")
)

// Binding is what an id is bound to (the additional data): it is not in the
// id and must be the same when the id is opened.
type Binding struct {
	Kind   string // what the id is: "mcp-session", "a2a-task"
	Server string // the gateway's server or agent name
	Tenant string // the caller's tenant ("" for none)
	Caller string // the caller's name ("" for an unauthenticated caller)
}

// Sealer seals and opens ids. It is safe for concurrent use.
type Sealer struct {
	aeads  []cipher.AEAD // the first seals; all open (key rotation)
	nonceK []byte        // the first key's stable-nonce key
	maxAge time.Duration
	now    func() time.Time
	random bool
}

// New returns a Sealer with keys (each KeySize bytes): ids are sealed with
// the first and opened with any, so a new key is put first and the old one
// kept until ids sealed with it are too old. Without keys a random key is
// made for this process: ids open on this replica only. maxAge <= 0 is
// DefaultMaxAge.
func New(keys [][]byte, maxAge time.Duration) (*Sealer, error) {
	s := &Sealer{maxAge: maxAge, now: time.Now}
	if s.maxAge <= 0 {
		s.maxAge = DefaultMaxAge
	}
	if len(keys) == 0 {
		k := make([]byte, KeySize)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("sealid: random key: %w", err)
		}
		keys, s.random = [][]byte{k}, true
	}
	for i, k := range keys {
		if i == 0 {
			m := hmac.New(sha256.New, k)
			m.Write([]byte("warden-sealid stable nonce"))
			s.nonceK = m.Sum(nil)
		}
		if len(k) != KeySize {
			return nil, fmt.Errorf("sealid: key %d is %d bytes; want %d", i+1, len(k), KeySize)
		}
		b, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("sealid: key %d: %w", i+1, err)
		}
		a, err := cipher.NewGCM(b)
		if err != nil {
			return nil, fmt.Errorf("sealid: key %d: %w", i+1, err)
		}
		s.aeads = append(s.aeads, a)
	}
	return s, nil
}

// Random reports whether the Sealer uses a per-process random key (no key
// configured): its ids do not open on another replica.
func (s *Sealer) Random() bool { return s.random }

// MaxAge is the age past which an id is refused.
func (s *Sealer) MaxAge() time.Duration { return s.maxAge }

// additional is the additional data of b: each field length-prefixed, so
// no two bindings share it.
func additional(b Binding, version byte) []byte {
	ad := make([]byte, 0, 24+len(b.Kind)+len(b.Server)+len(b.Tenant)+len(b.Caller))
	ad = append(ad, "warden-sealid"...)
	ad = append(ad, version)
	for _, f := range [...]string{b.Kind, b.Server, b.Tenant, b.Caller} {
		ad = binary.AppendUvarint(ad, uint64(len(f)))
		ad = append(ad, f...)
	}
	return ad
}

// Seal returns the id carrying payload, bound to b.
func (s *Sealer) Seal(b Binding, payload []byte) (string, error) {
	buf := make([]byte, headSize, headSize+issuedLen+len(payload)+tagSize)
	buf[0] = Version
	if _, err := rand.Read(buf[1:headSize]); err != nil {
		return "", fmt.Errorf("sealid: nonce: %w", err)
	}
	plain := make([]byte, issuedLen, issuedLen+len(payload))
	binary.BigEndian.PutUint64(plain, uint64(s.now().Unix()))
	plain = append(plain, payload...)
	buf = s.aeads[0].Seal(buf, buf[1:headSize], plain, additional(b, Version))
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// SealStable returns the stable id carrying payload, bound to b: the same
// for the same payload and binding under the same first key.
func (s *Sealer) SealStable(b Binding, payload []byte) string {
	ad := additional(b, VersionStable)
	m := hmac.New(sha256.New, s.nonceK)
	m.Write(ad)
	m.Write(payload)
	buf := make([]byte, headSize, headSize+len(payload)+tagSize)
	buf[0] = VersionStable
	copy(buf[1:headSize], m.Sum(nil))
	buf = s.aeads[0].Seal(buf, buf[1:headSize], payload, ad)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// OpenStable returns the payload of a stable id sealed for b with one of
// the keys; else ErrInvalid.
func (s *Sealer) OpenStable(b Binding, id string) ([]byte, error) {
	return s.open(b, id, VersionStable, minStable)
}

// open decodes id, checks its version and opens it with the first key
// that does.
func (s *Sealer) open(b Binding, id string, version byte, min int) ([]byte, error) {
	if len(id) > MaxIDLen || len(id) < base64.RawURLEncoding.EncodedLen(min) {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) < min || raw[0] != version {
		return nil, ErrInvalid
	}
	ad := additional(b, version)
	for _, a := range s.aeads {
		if plain, err := a.Open(nil, raw[1:headSize], raw[headSize:], ad); err == nil {
			return plain, nil
		}
	}
	return nil, ErrInvalid
}

// Open returns the payload of id if it was sealed for b with one of the
// keys and is not older than the maximum age; else ErrInvalid or ErrExpired.
func (s *Sealer) Open(b Binding, id string) ([]byte, error) {
	plain, err := s.open(b, id, Version, minSealed)
	if err != nil {
		return nil, err
	}
	issued := int64(binary.BigEndian.Uint64(plain))
	now := s.now()
	switch t := time.Unix(issued, 0); {
	case t.After(now.Add(futureSkew)):
		return nil, ErrInvalid // authentic but from a clock far ahead: refused
	case now.Sub(t) > s.maxAge:
		return nil, ErrExpired
	}
	return plain[issuedLen:], nil
}

// SealStrings seals fields (each length-prefixed) bound to b.
func (s *Sealer) SealStrings(b Binding, fields ...string) (string, error) {
	return s.Seal(b, joinFields(fields))
}

// SealStableStrings is SealStrings for a stable id (SealStable).
func (s *Sealer) SealStableStrings(b Binding, fields ...string) string {
	return s.SealStable(b, joinFields(fields))
}

// OpenStrings opens an id SealStrings made with n fields.
func (s *Sealer) OpenStrings(b Binding, id string, n int) ([]string, error) {
	p, err := s.Open(b, id)
	if err != nil {
		return nil, err
	}
	return splitFields(p, n)
}

// OpenStableStrings opens an id SealStableStrings made with n fields.
func (s *Sealer) OpenStableStrings(b Binding, id string, n int) ([]string, error) {
	p, err := s.OpenStable(b, id)
	if err != nil {
		return nil, err
	}
	return splitFields(p, n)
}

func joinFields(fields []string) []byte {
	n := 0
	for _, f := range fields {
		n += binary.MaxVarintLen32 + len(f)
	}
	p := make([]byte, 0, n)
	for _, f := range fields {
		p = binary.AppendUvarint(p, uint64(len(f)))
		p = append(p, f...)
	}
	return p
}

// splitFields reads exactly n length-prefixed fields from p.
func splitFields(p []byte, n int) ([]string, error) {
	out := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, ErrInvalid
		}
		out = append(out, string(p[k:k+int(l)]))
		p = p[k+int(l):]
	}
	if len(p) != 0 {
		return nil, ErrInvalid
	}
	return out, nil
}
