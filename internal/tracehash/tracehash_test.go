package tracehash

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

func TestKeyedChain(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	var content [Size]byte
	content[0] = 1
	prev := bytes.Repeat([]byte{2}, Size)
	k := NewKeyed(key)
	for _, p := range [][]byte{nil, prev} {
		m := hmac.New(sha256.New, key)
		m.Write(content[:])
		m.Write(p)
		got := k.Chain(&content, p)
		if !bytes.Equal(got[:], m.Sum(nil)) {
			t.Fatalf("Chain(prev %d bytes) is not HMAC-SHA256(key, content || prev)", len(p))
		}
	}
	m := Marker{AnchorPos: 3, AnchorHash: prev, Legacy: 1}
	m.Sign(key)
	if why := m.Check(key); why != "" {
		t.Fatal(why)
	}
	m.Legacy = 2
	if m.Check(key) == "" {
		t.Fatal("a changed marker checks")
	}
}

// BenchmarkChain and BenchmarkKeyedChain: the writer's per-record cost of
// the unkeyed and the keyed chain step.
func BenchmarkChain(b *testing.B) {
	var content [Size]byte
	prev := make([]byte, Size)
	for b.Loop() {
		h := Chain(&content, prev)
		prev = h[:]
	}
}

func BenchmarkKeyedChain(b *testing.B) {
	var content [Size]byte
	prev := make([]byte, Size)
	k := NewKeyed(make([]byte, KeySize))
	for b.Loop() {
		h := k.Chain(&content, prev)
		prev = h[:]
	}
}
