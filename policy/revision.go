package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"gopkg.in/yaml.v3"
)

// Revision returns the hex sha256 of the compiled set: of its policies'
// canonical sources (each document as JSON, so comments, key order and
// layout do not count) in id order. It is the same in every process for the
// same policies, whatever order their files were loaded in, and differs when
// any policy's content changes or a policy is added or removed. Records carry
// it as policy_revision.
func (s *Set) Revision() string { return s.revision }

func revision(ps []*Policy) string {
	sorted := append([]*Policy(nil), ps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	h := sha256.New()
	for _, p := range sorted {
		// Length-prefixed, so no two different sets hash the same stream.
		var n [8]byte
		l := uint64(len(p.canon))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(p.canon))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonical is a policy document's content as JSON (keys sorted, comments
// and layout dropped); a document JSON cannot hold falls back to its YAML.
func canonical(root *yaml.Node) string {
	var v any
	if err := root.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	b, _ := yaml.Marshal(root)
	return string(b)
}
