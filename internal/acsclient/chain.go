package acsclient

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// IsHash reports whether s is a lowercase-hex SHA-256 (64 characters of
// 0-9a-f), the form of chain_hash, entry_hash, previous_hash and
// request_hash.
func IsHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// EntryHash computes a ContextEntry's entry_hash (specification §8.2):
// lowercase hex of SHA-256(JCS(entry without entry_hash and previous_hash) ||
// the raw 32 bytes of prevHex), with nothing appended when prevHex is empty
// (the session's first entry). The entry's own previous_hash member is
// ignored; prevHex says what it links to.
func EntryHash(entry map[string]any, prevHex string) (string, error) {
	content := make(map[string]any, len(entry))
	for k, v := range entry {
		if k != "entry_hash" && k != "previous_hash" {
			content[k] = v
		}
	}
	c, err := Canonical(content)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(c)
	if prevHex != "" {
		if !IsHash(prevHex) {
			return "", fmt.Errorf("acsclient: previous hash %q is not 64 lowercase hex digits", prevHex)
		}
		prev, _ := hex.DecodeString(prevHex)
		h.Write(prev)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RequestHash computes a ContextEntry's request_hash (specification §8.1):
// lowercase hex of SHA-256(JCS(params)), params being the request's whole
// params object, its signature member included.
func RequestHash(params map[string]any) (string, error) {
	c, err := Canonical(params)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// VerifyChain walks entries, oldest first, from the session's root: the
// first must have no previous_hash (absent or null), each later one's
// previous_hash must be the entry_hash before it, and every entry_hash must
// be what EntryHash computes. It returns the head (the last entry_hash; ""
// for no entries) or the first break, naming the entry by index and
// entry_id.
func VerifyChain(entries []map[string]any) (head string, err error) {
	prev := ""
	for i, e := range entries {
		name := fmt.Sprintf("entry %d", i)
		if id, ok := e["entry_id"]; ok {
			name += fmt.Sprintf(" (entry_id %v)", id)
		}
		ph, present := e["previous_hash"]
		if i == 0 {
			if present && ph != nil {
				return "", fmt.Errorf("%s: previous_hash is %v; the chain's first entry has none", name, ph)
			}
		} else if s, _ := ph.(string); s != prev {
			return "", fmt.Errorf("%s: previous_hash is %v, want the entry_hash before it, %s", name, ph, prev)
		}
		got, _ := e["entry_hash"].(string)
		if !IsHash(got) {
			return "", fmt.Errorf("%s: entry_hash %v is not 64 lowercase hex digits", name, e["entry_hash"])
		}
		want, err := EntryHash(e, prev)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if got != want {
			return "", fmt.Errorf("%s: entry_hash is %s, recomputed %s", name, got, want)
		}
		prev = got
	}
	return prev, nil
}
