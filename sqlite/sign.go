package sqlite

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/internal/keyfile"
	"github.com/wardenhq/warden/sigkey"
)

// SignKeyFile is the file in the data directory holding the Ed25519 seed
// (32 bytes, mode 0600, created on first use) that signs retention's
// checkpoints (prune.go, verify.go). Each checkpoint also carries the public
// key, so a copy of the trace verifies without the secret; with it, verify
// also checks that this directory's key signed.
const SignKeyFile = "trace.sign.key"

// loadSignKey returns the data directory's signing key, creating it.
func loadSignKey(dir string) (ed25519.PrivateKey, error) {
	seed, err := keyfile.Load(keyfile.Spec{Dir: dir, Name: SignKeyFile, Size: ed25519.SeedSize,
		What: "trace signing key", Lost: "checkpoints signed with it then no longer match this directory's key"})
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// readSignKey returns the data directory's signing key without creating
// it: nil when there is none.
func readSignKey(dir string) (ed25519.PrivateKey, error) {
	seed, err := os.ReadFile(filepath.Join(dir, SignKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("sqlite: %s is not %d bytes", SignKeyFile, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// checkpointMessage is what a checkpoint's signature signs: the ASCII tag
// "warden.checkpoint.v1", then time (unix µs), last_rowid, last_id,
// last_hash and deleted, the integers as 8-byte big-endian two's complement
// and the strings each preceded by its length as an 8-byte big-endian
// unsigned integer. A checkpoint signed with another algorithm than
// Ed25519 (ML-DSA-65, SLH-DSA-128s) signs the tag "warden.checkpoint.v2"
// followed by its algorithm's name ("ml-dsa-65"), length-prefixed, then
// the same fields, so that a signature cannot be presented as one of
// another algorithm.
func checkpointMessage(cp *Checkpoint) []byte {
	b := []byte("warden.checkpoint.v1")
	if cp.Algorithm != "" && cp.Algorithm != string(sigkey.Ed25519) {
		b = []byte("warden.checkpoint.v2")
		b = binary.BigEndian.AppendUint64(b, uint64(len(cp.Algorithm)))
		b = append(b, cp.Algorithm...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(cp.Time))
	b = binary.BigEndian.AppendUint64(b, uint64(cp.LastRowID))
	b = binary.BigEndian.AppendUint64(b, uint64(len(cp.LastID)))
	b = append(b, cp.LastID...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(cp.LastHash)))
	b = append(b, cp.LastHash...)
	b = binary.BigEndian.AppendUint64(b, uint64(cp.Deleted))
	return b
}
