package detect

import (
	_ "embed" // the built-in model
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The learned injection model (docs/detectors.md, "The learned injection
// detector") is a logistic regression over hashed features of a segment of
// text: lowercased character 4-grams, words and word pairs, each hashed into
// a table of 2^bits weights. A text is cut into segments — sentences and
// lines of at least a model's MinSeg bytes, at most MaxSeg — and scores as
// its most suspicious segment, so that an instruction inserted into a long
// document is not diluted by the document around it and length alone does
// not raise the score. Featurize defines the features and Segments the
// segments: the trainer (internal/injtrain) and Score both call them.

// The default segment bounds (bytes).
const (
	LearnedMinSeg = 40
	LearnedMaxSeg = 256
	// LearnedMinN is the least number of features a segment's sum is
	// divided by the square root of, so that a short segment's few
	// features do not decide alone.
	LearnedMinN = 16
)

// Feature kinds, mixed into each feature's hash.
const (
	featGram uint64 = 1 + iota
	featWord
	featPair
)

// mix is splitmix64's finalizer: a cheap, well-spread 64-bit hash of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// norm maps a byte of text to the byte the features see: ASCII letters
// lowercased, digits and non-ASCII bytes (UTF-8 letters) kept, anything
// else a separator (0).
var norm = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c >= 0x80:
			t[c] = byte(c)
		}
	}
	return t
}()

// Featurize calls fn with each feature of s: its 64-bit hash and the offset
// in s just past its last byte. Features are the character 4-grams of s
// lowercased with every run of separators (bytes that are not letters,
// digits or non-ASCII) read as one space, its words (maximal runs of
// non-separators, at most 64 bytes counted), and each pair of consecutive
// words. It does not allocate.
func Featurize(s string, fn func(h uint64, end int)) {
	f := featurizer{s: s, sep: true}
	var buf [featureBatch]feature
	for n := f.fill(&buf); n > 0; n = f.fill(&buf) {
		for _, x := range buf[:n] {
			fn(x.h, x.end)
		}
	}
}

// feature is one feature: its hash and the offset just past its last byte.
type feature struct {
	h   uint64
	end int
}

// featureBatch is how many features featurizer.fill writes at most.
const featureBatch = 128

// featurizer is Featurize's state between batches: scoring reads a text's
// features a batch at a time, without a call per feature.
type featurizer struct {
	s          string
	i          int    // the next byte to read
	gram       uint32 // the last four normalized bytes
	grams      int    // how many bytes gram holds (up to 4)
	sep        bool   // the previous byte was a separator
	word, prev uint64 // the current and previous words' hashes
	wordLen    int
	done       bool // the last word was ended at the end of s
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

// fill writes the next features of f.s to buf, in order, and returns how
// many; 0 once every feature was written.
func (f *featurizer) fill(buf *[featureBatch]feature) int {
	s, i, gram, grams, sep, word, prev, wordLen := f.s, f.i, f.gram, f.grams, f.sep, f.word, f.prev, f.wordLen
	n := 0
	for ; i < len(s) && n <= featureBatch-3; i++ { // a byte writes at most three
		c := norm[s[i]]
		if c == 0 {
			if sep {
				continue
			}
			sep = true
			// the word that ends here, and its pair with the previous
			// one (!sep: there is one)
			buf[n] = feature{mix(word ^ featWord<<56), i}
			n++
			if prev != 0 {
				buf[n] = feature{mix(prev*fnvPrime ^ word ^ featPair<<56), i}
				n++
			}
			prev, word, wordLen = word, 0, 0
			c = ' '
		} else {
			sep = false
			if wordLen == 0 {
				word = fnvOffset
			}
			if wordLen < 64 {
				word = (word ^ uint64(c)) * fnvPrime
			}
			wordLen++
		}
		gram = gram<<8 | uint32(c)
		if grams < 4 {
			grams++
		}
		if grams == 4 {
			buf[n] = feature{mix(uint64(gram) ^ featGram<<56), i + 1}
			n++
		}
	}
	if i == len(s) && !f.done && n <= featureBatch-2 {
		f.done = true
		if wordLen > 0 { // the last word, as at a separator
			buf[n] = feature{mix(word ^ featWord<<56), i}
			n++
			if prev != 0 {
				buf[n] = feature{mix(prev*fnvPrime ^ word ^ featPair<<56), i}
				n++
			}
		}
	}
	f.i, f.gram, f.grams, f.sep, f.word, f.prev, f.wordLen = i, gram, grams, sep, word, prev, wordLen
	return n
}

// Model is a learned injection classifier: weights over hashed features, a
// bias, the segment bounds, and the calibration that maps a text's logit to
// a probability (sigmoid(A·logit + B)). Its zero value scores nothing.
type Model struct {
	bits uint8
	// MinSeg and MaxSeg bound a segment's length in bytes (Segments).
	MinSeg, MaxSeg int
	// MinN is the least divisor count: a segment's sum of weights is
	// divided by √max(n, MinN) for its n features.
	MinN int
	Bias float32
	A, B float32
	W    []float32 // 1 << bits weights
}

// NewModel returns a model of 2^bits zero weights and the default segment
// bounds (for the trainer).
func NewModel(bits uint8) *Model {
	return &Model{bits: bits, MinSeg: LearnedMinSeg, MaxSeg: LearnedMaxSeg, MinN: LearnedMinN, A: 1, W: make([]float32, 1<<bits)}
}

// Bits is the log2 of the model's number of weights.
func (m *Model) Bits() uint8 { return m.bits }

// Index is the weight a feature's hash selects.
func (m *Model) Index(h uint64) uint32 { return uint32(h >> (64 - m.bits)) }

// SegmentEnd returns the end of the segment of s that starts at start: the
// first line end ('\n') or sentence end ('.', '!' or '?' before a space or
// a line end) at least minSeg bytes after start, or start+maxSeg, or len(s).
func SegmentEnd(s string, start, minSeg, maxSeg int) int {
	for i := start; i < len(s); i++ {
		n := i + 1 - start
		if n >= maxSeg {
			return i + 1
		}
		if n < minSeg {
			continue
		}
		switch s[i] {
		case '\n':
			return i + 1
		case '.', '!', '?':
			if i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\n') {
				return i + 1
			}
		}
	}
	return len(s)
}

// modelMagic starts a model file.
const modelMagic = "WDNINJ2\n"

// modelHeader is the header's length: magic, bits and flags (a byte each),
// MinSeg, MaxSeg and MinN (uint16 each), Bias, A and B (float32 each).
const modelHeader = len(modelMagic) + 2 + 6 + 12

// Marshal encodes m: the header (modelHeader), then the weights, all
// little-endian float32.
func (m *Model) Marshal() []byte {
	b := make([]byte, 0, modelHeader+4*len(m.W))
	b = append(b, modelMagic...)
	b = append(b, m.bits, 0)
	for _, v := range []int{m.MinSeg, m.MaxSeg, m.MinN} {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	for _, f := range []float32{m.Bias, m.A, m.B} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	for _, w := range m.W {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(w))
	}
	return b
}

// maxModelBits bounds a model's table (2^24 float32: 64 MiB).
const maxModelBits = 24

// ParseModel decodes what Marshal wrote.
func ParseModel(b []byte) (*Model, error) {
	if len(b) < modelHeader || string(b[:len(modelMagic)]) != modelMagic {
		return nil, errors.New("detect: not an injection model (bad magic)")
	}
	h := b[len(modelMagic):]
	bits := h[0]
	if bits == 0 || bits > maxModelBits {
		return nil, fmt.Errorf("detect: injection model: %d bits, want 1..%d", bits, maxModelBits)
	}
	if h[1] != 0 {
		return nil, fmt.Errorf("detect: injection model: unknown flags %#x", h[1])
	}
	u16 := func(off int) int { return int(binary.LittleEndian.Uint16(h[off:])) }
	f32 := func(off int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(h[off:])) }
	m := &Model{bits: bits, MinSeg: u16(2), MaxSeg: u16(4), MinN: u16(6), Bias: f32(8), A: f32(12), B: f32(16)}
	if m.MaxSeg < 16 || m.MinSeg > m.MaxSeg || m.MinN < 1 {
		return nil, fmt.Errorf("detect: injection model: segments of %d..%d bytes, at least %d features: want 16 <= max, min <= max, at least 1", m.MinSeg, m.MaxSeg, m.MinN)
	}
	for _, f := range []float32{m.Bias, m.A, m.B} {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, errors.New("detect: injection model: bias or calibration is not finite")
		}
	}
	n := 1 << bits
	if len(b) != modelHeader+4*n {
		return nil, fmt.Errorf("detect: injection model: %d bytes, want %d for %d bits", len(b), modelHeader+4*n, bits)
	}
	m.W = make([]float32, n)
	for i := range m.W {
		m.W[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[modelHeader+4*i:]))
		if math.IsNaN(float64(m.W[i])) || math.IsInf(float64(m.W[i]), 0) {
			return nil, fmt.Errorf("detect: injection model: weight %d is not finite", i)
		}
	}
	return m, nil
}

// Scale is what a segment's sum of weights is multiplied by for its n
// features: 1/√max(n, MinN).
func (m *Model) Scale(n int) float32 {
	return 1 / float32(math.Sqrt(float64(max(n, m.MinN))))
}

// Logit returns the largest segment logit of s (Bias for a text without
// features): Bias plus a segment's sum of weights times Scale, a feature
// counted in the segment its last byte falls in. It does not allocate.
func (m *Model) Logit(s string) float32 {
	if len(m.W) == 0 {
		return 0
	}
	var sum float32
	n := 0
	segEnd := SegmentEnd(s, 0, m.MinSeg, m.MaxSeg)
	best := float32(math.Inf(-1))
	shift := 64 - m.bits
	w := m.W
	f := featurizer{s: s, sep: true}
	var buf [featureBatch]feature
	for k := f.fill(&buf); k > 0; k = f.fill(&buf) {
		for _, x := range buf[:k] {
			for x.end > segEnd { // close the segments before this feature's
				if n > 0 {
					best = max(best, sum*m.Scale(n))
				}
				sum, n = 0, 0
				segEnd = SegmentEnd(s, segEnd, m.MinSeg, m.MaxSeg)
			}
			sum += w[uint32(x.h>>shift)]
			n++
		}
	}
	if n > 0 {
		best = max(best, sum*m.Scale(n))
	}
	if math.IsInf(float64(best), -1) {
		return m.Bias
	}
	return m.Bias + best
}

// Score returns s's calibrated probability of holding an injection:
// sigmoid(A·Logit + B), from its most suspicious segment.
func (m *Model) Score(s string) float64 {
	if len(m.W) == 0 {
		return 0
	}
	z := float64(m.A)*float64(m.Logit(s)) + float64(m.B)
	return 1 / (1 + math.Exp(-z))
}

// The built-in model, trained by internal/injtrain (docs/detectors.md);
// injection.model.sha256 beside it records its checksum.
//
//go:embed injection.model
var builtinModel []byte

// learnedModel parses the built-in model once, on first use.
var learnedModel = sync.OnceValue(func() *Model {
	m, err := ParseModel(builtinModel)
	if err != nil {
		panic("detect: the built-in injection model: " + err.Error()) // TestBuiltinModel
	}
	return m
})

// LearnedInjection returns the built-in learned model's score of s in
// 0..1: 0.5 and above is its operating point (docs/detectors.md).
func LearnedInjection(s string) float64 {
	if len(s) == 0 {
		return 0
	}
	return learnedModel().Score(s)
}
