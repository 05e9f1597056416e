package tracehash

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/internal/keyfile"
)

// # The chain key
//
// An unkeyed chain (Chain) proves nothing against whoever can write the
// trace: they edit a record and recompute every hash after it. Records are
// therefore chained under a secret key, the chain key (32 random bytes),
// kept outside the trace's directory:
//
//	content = SHA-256(canonicalV2(record))     (DigestV2: v1's fields, then shadow, then sealed when present)
//	hash    = HMAC-SHA256(key, content || prev)
//
// Without the key, nobody can compute a record's hash: an editor of the
// database cannot make an edited record verify, nor recompute the chain
// after it. A verifier without the key can only check the linkage (each
// prev_hash is the hash stored before it).
//
// Each trace keeps one marker (Marker): where the keyed records start (the
// chain's head when the key was first used: records before it are from
// before the key, hashed with Chain), how many records from before the
// chain (no hash at all) it may start with, and the key's id, all under a
// MAC with the key. So an editor cannot claim that keyed records are from
// before the key, or that hashed ones never had a hash.

// KeySize is the size of a chain key in bytes.
const KeySize = 32

// KeyEnv names the environment variable that gives the chain key's file;
// KeyFileName is the file's name in the default place (DefaultKeyFile).
const (
	KeyEnv      = "WARDEN_TRACE_KEY_FILE"
	KeyFileName = "trace.chain.key"
)

// DefaultKeyFile is where the chain key is when none is given: the file
// $WARDEN_TRACE_KEY_FILE names, else trace.chain.key in warden's user
// configuration directory ($XDG_CONFIG_HOME/warden, ~/.config/warden on
// Linux; os.UserConfigDir) — not in the trace's directory, so that a copy
// of the trace, or whoever may write it, does not have it.
func DefaultKeyFile() (string, error) {
	if p := os.Getenv(KeyEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the trace chain key (%v): set %s to a file", err, KeyEnv)
	}
	return filepath.Join(dir, "warden", KeyFileName), nil
}

func keySpec(path string) keyfile.Spec {
	return keyfile.Spec{Dir: filepath.Dir(path), Name: filepath.Base(path), Size: KeySize,
		What: "trace chain key",
		Lost: "traces keyed with it then no longer open for writing, and verify cannot authenticate them"}
}

// LoadKey returns the chain key in path, creating it (and its directory,
// mode 0700) when there is none.
func LoadKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("trace chain key: %w", err)
	}
	return keyfile.Load(keySpec(path))
}

// ReadKey returns the chain key in path without creating it: nil when
// there is no such file.
func ReadKey(path string) ([]byte, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return keyfile.Load(keySpec(path))
}

// KeyID names a chain key without revealing it: the first 8 bytes of
// HMAC-SHA256(key, "warden.trace.key-id"), in hex.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("warden.trace.key-id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// Keyed chains records under a chain key. Not safe for concurrent use.
type Keyed struct {
	mac hash.Hash
	buf [2 * Size]byte
}

// NewKeyed returns a Keyed for key.
func NewKeyed(key []byte) *Keyed { return &Keyed{mac: hmac.New(sha256.New, key)} }

// Chain is HMAC-SHA256(key, content || prev), a keyed record's hash; prev
// is the previous record's hash, 0 or Size bytes.
func (k *Keyed) Chain(content *[Size]byte, prev []byte) [Size]byte {
	copy(k.buf[:], content[:])
	n := copy(k.buf[Size:], prev)
	k.mac.Reset()
	k.mac.Write(k.buf[:Size+n])
	var out [Size]byte
	k.mac.Sum(out[:0])
	return out
}

// MarkerVersion is the Marker's version: records after its anchor are
// encoded with DigestV2 and chained with Keyed.
const MarkerVersion = 2

// Marker is a trace's chain marker (one per trace, the store's
// trace_chain row).
type Marker struct {
	Version int64
	// AnchorPos and AnchorHash are the position (SQLite's rowid,
	// PostgreSQL's seq; 0: none) and hash (nil: none) of the chain's head
	// when the key was first used: the records after it are keyed, those
	// up to it are from before the key.
	AnchorPos  int64
	AnchorHash []byte
	// Legacy is how many records from before the hash chain (no hash)
	// the trace started with when the marker was written.
	Legacy int64
	// KeyID is the chain key's (KeyID); MAC is Sum under it. Both are
	// empty in a marker no key has signed (a trace written before the key
	// and not opened for writing since).
	KeyID string
	MAC   []byte
}

// Sum is the marker's MAC under key: HMAC-SHA256(key, "warden.trace.chain"
// || version || anchor_pos || anchor_hash || legacy || key_id), integers
// as 8-byte big-endian, byte strings preceded by their length as one.
func (m *Marker) Sum(key []byte) []byte {
	b := []byte("warden.trace.chain")
	b = binary.BigEndian.AppendUint64(b, uint64(m.Version))
	b = binary.BigEndian.AppendUint64(b, uint64(m.AnchorPos))
	b = binary.BigEndian.AppendUint64(b, uint64(len(m.AnchorHash)))
	b = append(b, m.AnchorHash...)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Legacy))
	b = binary.BigEndian.AppendUint64(b, uint64(len(m.KeyID)))
	b = append(b, m.KeyID...)
	h := hmac.New(sha256.New, key)
	h.Write(b)
	return h.Sum(nil)
}

// Sign sets the marker's KeyID and MAC for key.
func (m *Marker) Sign(key []byte) {
	m.Version = MarkerVersion
	m.KeyID = KeyID(key)
	m.MAC = m.Sum(key)
}

// Check returns why the marker does not hold under key, "" when it does.
func (m *Marker) Check(key []byte) string {
	id := KeyID(key)
	switch {
	case m.KeyID == "":
		return "the trace's chain marker names no chain key: it was never keyed, or its key was removed from the marker"
	case m.KeyID != id:
		return fmt.Sprintf("the trace is keyed with chain key %s, not with the key given (%s)", m.KeyID, id)
	case m.Version != MarkerVersion:
		return fmt.Sprintf("the trace's chain marker has version %d, not %d", m.Version, MarkerVersion)
	case !hmac.Equal(m.MAC, m.Sum(key)):
		return "the trace's chain marker's MAC does not verify: the marker was changed (where the keyed records start, or how many unhashed ones the trace may start with)"
	}
	return ""
}

// ResolveKey returns the chain key a writer uses: key when given, else
// the file's (file, else DefaultKeyFile), created when there is none.
// where names it in messages.
func ResolveKey(key []byte, file string) (k []byte, where string, err error) {
	if key != nil {
		if len(key) != KeySize {
			return nil, "", fmt.Errorf("trace chain key: %d bytes, want %d", len(key), KeySize)
		}
		return key, "the chain key given", nil
	}
	if file == "" {
		if file, err = DefaultKeyFile(); err != nil {
			return nil, "", err
		}
	}
	k, err = LoadKey(file)
	return k, file, err
}

// VerifyKey is the chain key a verify checks with: none with noKey; else
// key; else the file keyFile names (which must exist); else own, the key
// of a store open for writing; else the default key file's, when there is
// one (nil when not: linkage only).
func VerifyKey(noKey bool, key []byte, keyFile string, own []byte) ([]byte, error) {
	switch {
	case noKey:
		return nil, nil
	case key != nil:
		return key, nil
	case keyFile != "":
		k, err := ReadKey(keyFile)
		if err == nil && k == nil {
			err = fmt.Errorf("trace chain key %s: no such file", keyFile)
		}
		return k, err
	case own != nil:
		return own, nil
	}
	f, err := DefaultKeyFile()
	if err != nil {
		return nil, nil // no default place: no key
	}
	return ReadKey(f)
}

// OpenMarker checks a trace's marker m against key, for a verify: the
// Keyed to check the keyed records with (nil without a key), or why the
// marker fails ("" when it holds). With a key, a trace with no marker
// fails: none of its records is keyed.
func OpenMarker(m *Marker, key []byte) (*Keyed, string) {
	switch {
	case key == nil:
		return nil, ""
	case m == nil:
		return nil, "the trace has no chain marker: no record in it is keyed (the marker was removed, or no warden with a chain key has written it)"
	}
	if why := m.Check(key); why != "" {
		return nil, why
	}
	return NewKeyed(key), ""
}
