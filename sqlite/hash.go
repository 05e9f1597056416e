package sqlite

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// The trace is a hash chain (docs/verify.md). Every row carries prev_hash,
// the hash of the row inserted before it ("" for the first hashed row of a
// trace), and hash:
//
//	content = SHA-256(canonical(row))
//	hash    = hex(SHA-256(content || prev))
//
// where prev is the 32 bytes prev_hash encodes (no bytes when prev_hash is
// "") and hex is lowercase. canonical(row) is the ASCII tag "warden.trace.v1"
// followed by the row's stored fields in this order, each a string of bytes
// preceded by its length as an 8-byte big-endian unsigned integer, except
// time and latency_us, which are 8-byte big-endian two's complement integers
// without a length:
//
//	id, time (unix µs), event, surface, direction, request_id, agent_id,
//	session_id, turn_id, step_id, decision, reason, reason_codes (the
//	stored JSON text; empty when NULL), policy_id, policy_version,
//	latency_us, results, input, output (the bytes stored in trace.blobs),
//	policy_revision, views (trace.blobs), caller, tenant, approval_id, tool
//
// The content digest is computed on the recording goroutine (fill), so the
// single writer goroutine only hashes 64 bytes per record: it alone knows
// the previous hash, which it reads inside the write transaction.
const canonTag = "warden.trace.v1"

// canon writes a canonical encoding into a hash, batching small fields.
type canon struct {
	h   hash.Hash
	buf []byte
}

func newCanon() *canon { return &canon{h: sha256.New(), buf: make([]byte, 0, 512)} }

func (c *canon) reset() {
	c.h.Reset()
	c.buf = append(c.buf[:0], canonTag...)
}

func (c *canon) str(s string) {
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(len(s)))
	c.buf = append(c.buf, s...)
}

func (c *canon) bytes(b []byte) {
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(len(b)))
	if len(b) > 256 {
		c.h.Write(c.buf)
		c.buf = c.buf[:0]
		c.h.Write(b)
		return
	}
	c.buf = append(c.buf, b...)
}

func (c *canon) int(v int64) { c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(v)) }

func (c *canon) sum(dst *[sha256.Size]byte) {
	c.h.Write(c.buf)
	c.buf = c.buf[:0]
	c.h.Sum(dst[:0])
}

// rowContent is a row's stored fields, as canonical encodes them.
type rowContent struct {
	id                                                       string
	us                                                       int64
	event, surface, direction, requestID, agentID, sessionID string
	turnID, stepID, decision, reason                         string
	codes                                                    []byte
	policyID, policyVersion                                  string
	latency                                                  int64
	results, input, output                                   []byte
	policyRevision                                           string
	views                                                    []byte
	caller, tenant, approvalID, tool                         string
}

// digest sets dst to SHA-256(canonical(f)).
func (c *canon) digest(f *rowContent, dst *[sha256.Size]byte) {
	c.reset()
	c.str(f.id)
	c.int(f.us)
	c.str(f.event)
	c.str(f.surface)
	c.str(f.direction)
	c.str(f.requestID)
	c.str(f.agentID)
	c.str(f.sessionID)
	c.str(f.turnID)
	c.str(f.stepID)
	c.str(f.decision)
	c.str(f.reason)
	c.bytes(f.codes)
	c.str(f.policyID)
	c.str(f.policyVersion)
	c.int(f.latency)
	c.bytes(f.results)
	c.bytes(f.input)
	c.bytes(f.output)
	c.str(f.policyRevision)
	c.bytes(f.views)
	c.str(f.caller)
	c.str(f.tenant)
	c.str(f.approvalID)
	c.str(f.tool)
	c.sum(dst)
}

// chainHash is SHA-256(content || prev), prev being 0 or 32 bytes.
func chainHash(content *[sha256.Size]byte, prev []byte) [sha256.Size]byte {
	var b [2 * sha256.Size]byte
	copy(b[:], content[:])
	n := copy(b[sha256.Size:], prev)
	return sha256.Sum256(b[:sha256.Size+n])
}

// decodeHash returns the bytes of a stored hash ("" gives none) and whether
// it is well formed.
func decodeHash(s string) ([]byte, bool) {
	if s == "" {
		return nil, true
	}
	b, err := hex.DecodeString(s)
	return b, err == nil && len(b) == sha256.Size
}
