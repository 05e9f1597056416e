// Package tracehash is the canonical encoding and the hash chain of a warden
// trace (docs/verify.md), shared by the SQLite and PostgreSQL stores so that
// `warden verify` means the same on both.
//
// Every record carries prev_hash, the hash of the record stored before it
// ("" for the first hashed record of a trace), and hash:
//
//	content = SHA-256(canonical(record))
//	hash    = hex(SHA-256(content || prev))
//
// where prev is the 32 bytes prev_hash encodes (no bytes when prev_hash is
// "") and hex is lowercase. canonical(record) is the ASCII tag
// "warden.trace.v1" followed by the record's stored fields in this order,
// each a string of bytes preceded by its length as an 8-byte big-endian
// unsigned integer, except time and latency_us, which are 8-byte big-endian
// two's complement integers without a length:
//
//	id, time (unix µs), event, surface, direction, request_id, agent_id,
//	session_id, turn_id, step_id, decision, reason, reason_codes (the
//	stored JSON text; empty when none), policy_id, policy_version,
//	latency_us, results, input, output (the bytes stored), policy_revision,
//	views, caller, tenant, approval_id, tool
//
// A store computes the content digest on the recording goroutine, so that
// its writer, which alone knows the previous hash, hashes only 64 bytes per
// record.
package tracehash

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Tag starts every canonical encoding of a record from before the chain
// key (v1); TagV2 every one hashed under a chain key (key.go).
const (
	Tag   = "warden.trace.v1"
	TagV2 = "warden.trace.v2"
)

// Size is the size of a hash in bytes.
const Size = sha256.Size

// Row is a record's stored fields, as the canonical encoding takes them.
type Row struct {
	ID                                                       string
	TimeUS                                                   int64
	Event, Surface, Direction, RequestID, AgentID, SessionID string
	TurnID, StepID, Decision, Reason                         string
	ReasonCodes                                              []byte // the stored JSON text; nil for none
	PolicyID, PolicyVersion                                  string
	LatencyUS                                                int64
	Results, Input, Output                                   []byte
	PolicyRevision                                           string
	Views                                                    []byte
	Caller, Tenant, ApprovalID, Tool                         string
	// Shadow is the shadow set's verdict (runs.shadow, "" for none): in
	// the v2 encoding only (DigestV2).
	Shadow string
	// Sealed is the record's sealed originals (runs.sealed, the stored
	// JSON text; nil for none): in the v2 encoding only, after shadow and
	// only when not empty, so a record without sealed values hashes as
	// before they existed.
	Sealed []byte
}

// Canon computes content digests, reusing its buffers. Not safe for
// concurrent use.
type Canon struct {
	h   hash.Hash
	buf []byte
}

// NewCanon returns a Canon.
func NewCanon() *Canon { return &Canon{h: sha256.New(), buf: make([]byte, 0, 512)} }

func (c *Canon) reset(tag string) {
	c.h.Reset()
	c.buf = append(c.buf[:0], tag...)
}

func (c *Canon) str(s string) {
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(len(s)))
	c.buf = append(c.buf, s...)
}

// bytes batches small fields into buf and writes big ones straight through.
func (c *Canon) bytes(b []byte) {
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(len(b)))
	if len(b) > 256 {
		c.h.Write(c.buf)
		c.buf = c.buf[:0]
		c.h.Write(b)
		return
	}
	c.buf = append(c.buf, b...)
}

func (c *Canon) int(v int64) { c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(v)) }

func (c *Canon) sum(dst *[Size]byte) {
	c.h.Write(c.buf)
	c.buf = c.buf[:0]
	c.h.Sum(dst[:0])
}

// Digest sets dst to SHA-256(canonical(f)), the record's content digest.
func (c *Canon) Digest(f *Row, dst *[Size]byte) {
	c.fields(Tag, f)
	c.sum(dst)
}

// DigestV2 sets dst to SHA-256(canonicalV2(f)): the tag TagV2, the fields
// of Digest in the same order, then shadow, then sealed when there are
// sealed originals. Records written under a chain
// key (key.go) are hashed with it.
func (c *Canon) DigestV2(f *Row, dst *[Size]byte) {
	c.fields(TagV2, f)
	c.str(f.Shadow)
	if len(f.Sealed) > 0 {
		c.bytes(f.Sealed)
	}
	c.sum(dst)
}

func (c *Canon) fields(tag string, f *Row) {
	c.reset(tag)
	c.str(f.ID)
	c.int(f.TimeUS)
	c.str(f.Event)
	c.str(f.Surface)
	c.str(f.Direction)
	c.str(f.RequestID)
	c.str(f.AgentID)
	c.str(f.SessionID)
	c.str(f.TurnID)
	c.str(f.StepID)
	c.str(f.Decision)
	c.str(f.Reason)
	c.bytes(f.ReasonCodes)
	c.str(f.PolicyID)
	c.str(f.PolicyVersion)
	c.int(f.LatencyUS)
	c.bytes(f.Results)
	c.bytes(f.Input)
	c.bytes(f.Output)
	c.str(f.PolicyRevision)
	c.bytes(f.Views)
	c.str(f.Caller)
	c.str(f.Tenant)
	c.str(f.ApprovalID)
	c.str(f.Tool)
}

// Chain is SHA-256(content || prev), the record's hash; prev is the previous
// record's hash, 0 or Size bytes.
func Chain(content *[Size]byte, prev []byte) [Size]byte {
	var b [2 * Size]byte
	copy(b[:], content[:])
	n := copy(b[Size:], prev)
	return sha256.Sum256(b[:Size+n])
}

// Decode returns the bytes of a hex hash ("" gives none) and whether it is
// well formed (empty, or Size bytes of lowercase or uppercase hex).
func Decode(s string) ([]byte, bool) {
	if s == "" {
		return nil, true
	}
	b, err := hex.DecodeString(s)
	return b, err == nil && len(b) == Size
}
