package main

import (
	"crypto/sha256"
	"encoding/binary"
)

// rng is splitmix64: tiny, and its output is fixed by this file alone, so
// the data it shapes do not change with the Go release (math/rand's
// helpers are not promised to stay the same).
type rng struct{ s uint64 }

// newRNG seeds a generator from the run's seed and any number of labels,
// so every use (a source, a document, an instruction) has its own stream
// that does not shift when another use draws more or fewer numbers.
func newRNG(seed string, labels ...string) *rng {
	return &rng{s: hash64(seed, labels...)}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); n must be > 0.
func (r *rng) intn(n int) int {
	if n <= 0 {
		panic("injdata: intn of a non-positive bound")
	}
	return int(r.next() % uint64(n))
}

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return float64(r.next()>>11)/(1<<53) < p }

// pick returns one element of xs.
func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// shuffle permutes xs in place (Fisher–Yates).
func shuffle[T any](r *rng, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// hash64 is the first 8 bytes of SHA-256 over the seed and the labels,
// each terminated by a zero byte so that ("ab","c") and ("a","bc") differ.
func hash64(seed string, labels ...string) uint64 {
	h := sha256.New()
	h.Write([]byte(seed))
	h.Write([]byte{0})
	for _, l := range labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}
