package sqlite

import (
	"crypto/sha256"

	"github.com/wardenhq/warden/internal/tracehash"
)

// The trace is a hash chain (docs/verify.md). Every row carries prev_hash,
// the hash of the row inserted before it ("" for the first hashed row of a
// trace), and hash; the canonical encoding is internal/tracehash's, shared
// with the PostgreSQL store. Here the results, input, output and views it
// covers are the bytes stored in trace.blobs, and reason_codes is the stored
// JSON text (empty when NULL).
//
// The content digest is computed on the recording goroutine (fill), so the
// single writer goroutine only hashes 64 bytes per record: it alone knows
// the previous hash, which it reads inside the write transaction.
type (
	canon      = tracehash.Canon
	rowContent = tracehash.Row
)

func newCanon() *canon { return tracehash.NewCanon() }

// chainHash is SHA-256(content || prev), prev being 0 or 32 bytes.
func chainHash(content *[sha256.Size]byte, prev []byte) [sha256.Size]byte {
	return tracehash.Chain(content, prev)
}

// decodeHash returns the bytes of a stored hash ("" gives none) and whether
// it is well formed.
func decodeHash(s string) ([]byte, bool) { return tracehash.Decode(s) }
