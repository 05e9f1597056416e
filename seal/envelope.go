package seal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the first byte of every sealed value this package writes.
const Version = 1

// maxName bounds a tenant name or a session id in an envelope, in bytes.
const maxName = 1024

// gcmTag is AES-GCM's tag size.
const gcmTag = 16

// ErrMalformed is returned for bytes that are not a sealed value (wrong
// version, truncated, a field out of bounds).
var ErrMalformed = errors.New("seal: not a sealed value")

// Envelope is a sealed value, decoded:
//
//	version (1 byte, Version)
//	tenant, period, session (each: uvarint length, bytes)
//	session key id (8 bytes)
//	nonce (12 bytes)
//	ciphertext and GCM tag (at least 16 bytes)
//
// Everything before the nonce is the header; the header and the caller's
// additional data are the GCM additional data.
type Envelope struct {
	// Tenant, Period and Session say which session key sealed the value.
	Tenant, Period, Session string
	// Key is the session key's id.
	Key KeyID
	// Nonce is the GCM nonce.
	Nonce [nonceSize]byte
	// Ciphertext is the sealed value with its tag.
	Ciphertext []byte
}

// appendHeader appends the envelope's header to b.
func appendHeader(b []byte, tenant, period, session string, key KeyID) []byte {
	b = append(b, Version)
	b = appendString(b, tenant)
	b = appendString(b, period)
	b = appendString(b, session)
	return append(b, key[:]...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Marshal encodes e.
func (e *Envelope) Marshal() []byte {
	b := appendHeader(make([]byte, 0, 1+3*2+len(e.Tenant)+len(e.Period)+len(e.Session)+8+nonceSize+len(e.Ciphertext)),
		e.Tenant, e.Period, e.Session, e.Key)
	b = append(b, e.Nonce[:]...)
	return append(b, e.Ciphertext...)
}

// ParseEnvelope decodes a sealed value; it returns the envelope and the
// length of its header. The envelope's strings are copies; its Ciphertext
// aliases b. Errors wrap ErrMalformed.
func ParseEnvelope(b []byte) (Envelope, int, error) {
	var e Envelope
	if len(b) == 0 {
		return e, 0, fmt.Errorf("%w: empty", ErrMalformed)
	}
	if b[0] != Version {
		return e, 0, fmt.Errorf("%w: version %d (this build reads %d)", ErrMalformed, b[0], Version)
	}
	off := 1
	for _, f := range []struct {
		name string
		dst  *string
		max  int
	}{{"tenant", &e.Tenant, maxName}, {"period", &e.Period, len("2006-01-02")}, {"session", &e.Session, maxName}} {
		n, w := binary.Uvarint(b[off:])
		if w <= 0 || w != uvarintLen(n) || n > uint64(f.max) || n > uint64(len(b)-off-w) {
			return e, 0, fmt.Errorf("%w: bad %s length", ErrMalformed, f.name)
		}
		off += w
		*f.dst = string(b[off : off+int(n)])
		off += int(n)
	}
	if e.Tenant == "" {
		return e, 0, fmt.Errorf("%w: no tenant", ErrMalformed)
	}
	if _, err := PeriodEnd(e.Period); err != nil {
		return e, 0, fmt.Errorf("%w: bad period", ErrMalformed)
	}
	if len(b)-off < len(e.Key)+nonceSize+gcmTag {
		return e, 0, fmt.Errorf("%w: truncated", ErrMalformed)
	}
	off += copy(e.Key[:], b[off:])
	hdr := off
	off += copy(e.Nonce[:], b[off:])
	e.Ciphertext = b[off:]
	return e, hdr, nil
}

// uvarintLen is the length of n's shortest uvarint: a longer one is
// refused, so one envelope has one encoding.
func uvarintLen(n uint64) int {
	w := 1
	for ; n >= 0x80; n >>= 7 {
		w++
	}
	return w
}
