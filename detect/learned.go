package detect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The learned injection model (docs/detectors.md, "The learned injection
// detector") is a logistic regression over hashed features of a window of
// text: lowercased character 4-grams, words and word pairs, each hashed into
// a table of 2^bits weights. A text is scored window by window — windows of
// LearnedWindow bytes every LearnedStride bytes, a feature counted in the
// window its last byte falls in — and its score is its most suspicious
// window's, so that length alone does not raise it. Featurize is the one
// definition of the features: the trainer (internal/injtrain) and Score
// both call it.

// The default window geometry: a text is cut in blocks of a model's
// stride (LearnedStride unless the model says otherwise), and window i is
// blocks i and i+1 (a text of at most two blocks is one window).
const (
	LearnedWindow = InjectionWindow
	LearnedStride = InjectionStride
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
	var gram uint32 // the last four normalized bytes
	grams := 0      // how many bytes gram holds (up to 4)
	sep := true     // the previous byte was a separator
	var word, prev uint64
	wordLen := 0
	const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211
	endWord := func(end int) {
		if wordLen == 0 {
			return
		}
		fn(mix(word^featWord<<56), end)
		if prev != 0 {
			fn(mix(prev*fnvPrime^word^featPair<<56), end)
		}
		prev, word, wordLen = word, 0, 0
	}
	for i := 0; i < len(s); i++ {
		c := norm[s[i]]
		if c == 0 {
			if sep {
				continue
			}
			sep = true
			endWord(i)
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
			fn(mix(uint64(gram)^featGram<<56), i+1)
		}
	}
	endWord(len(s))
}

// Model is a learned injection classifier: weights over hashed features, a
// bias, and the calibration that maps a window's logit to a probability
// (Platt scaling: sigmoid(A·logit + B)). Its zero value scores nothing.
type Model struct {
	bits uint8
	// Stride is the block size in bytes (a window is two blocks).
	Stride int
	// Sqrt divides a window's sum of weights by the square root of its
	// number of features, so that a window's logit does not grow with
	// how much text it holds.
	Sqrt bool
	Bias float32
	A, B float32
	W    []float32 // 1 << bits weights
}

// NewModel returns a model of 2^bits zero weights (for the trainer).
func NewModel(bits uint8) *Model {
	return &Model{bits: bits, Stride: LearnedStride, A: 1, W: make([]float32, 1<<bits)}
}

// Bits is the log2 of the model's number of weights.
func (m *Model) Bits() uint8 { return m.bits }

// Index is the weight a feature's hash selects.
func (m *Model) Index(h uint64) uint32 { return uint32(h >> (64 - m.bits)) }

// modelMagic starts a model file.
const modelMagic = "WDNINJ1\n"

// Marshal encodes m: modelMagic, bits (one byte), flags (one byte: 1 for
// Sqrt), Stride (uint16), Bias, A and B, then the weights, all
// little-endian float32.
func (m *Model) Marshal() []byte {
	b := make([]byte, 0, len(modelMagic)+16+4*len(m.W))
	b = append(b, modelMagic...)
	var flags byte
	if m.Sqrt {
		flags |= 1
	}
	b = append(b, m.bits, flags)
	b = binary.LittleEndian.AppendUint16(b, uint16(m.Stride))
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
	const hdr = len(modelMagic) + 16
	if len(b) < hdr || string(b[:len(modelMagic)]) != modelMagic {
		return nil, errors.New("detect: not an injection model (bad magic)")
	}
	bits := b[len(modelMagic)]
	if bits == 0 || bits > maxModelBits {
		return nil, fmt.Errorf("detect: injection model: %d bits, want 1..%d", bits, maxModelBits)
	}
	stride := int(binary.LittleEndian.Uint16(b[len(modelMagic)+2:]))
	if stride < 16 {
		return nil, fmt.Errorf("detect: injection model: stride %d, want at least 16", stride)
	}
	n := 1 << bits
	if len(b) != hdr+4*n {
		return nil, fmt.Errorf("detect: injection model: %d bytes, want %d for %d bits", len(b), hdr+4*n, bits)
	}
	f := func(off int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[off:])) }
	if b[len(modelMagic)+1]&^1 != 0 {
		return nil, fmt.Errorf("detect: injection model: unknown flags %#x", b[len(modelMagic)+1])
	}
	m := &Model{bits: bits, Stride: stride, Sqrt: b[len(modelMagic)+1]&1 != 0, Bias: f(len(modelMagic) + 4), A: f(len(modelMagic) + 8), B: f(len(modelMagic) + 12), W: make([]float32, n)}
	for i := range m.W {
		m.W[i] = f(hdr + 4*i)
		if math.IsNaN(float64(m.W[i])) || math.IsInf(float64(m.W[i]), 0) {
			return nil, fmt.Errorf("detect: injection model: weight %d is not finite", i)
		}
	}
	return m, nil
}

// Logit returns the largest window logit of s (Bias for an empty text):
// windows of two blocks of Stride bytes every Stride bytes, a feature
// counted in the block its last byte falls in. It does not allocate.
func (m *Model) Logit(s string) float32 {
	if len(m.W) == 0 {
		return 0
	}
	var cur, prev float32 // the sums of the current and previous block
	var ncur, nprev int   // their numbers of features
	block, blocks := 0, 0
	best := float32(math.Inf(-1))
	window := func() float32 {
		if m.Sqrt && nprev+ncur > 0 {
			return (prev + cur) / float32(math.Sqrt(float64(nprev+ncur)))
		}
		return prev + cur
	}
	Featurize(s, func(h uint64, end int) {
		b := (end - 1) / m.Stride
		for block < b { // close the blocks before b
			if blocks > 0 {
				best = max(best, window())
			}
			prev, cur, nprev, ncur = cur, 0, ncur, 0
			block++
			blocks++
		}
		cur += m.W[m.Index(h)]
		ncur++
	})
	// The last window: the last two blocks (or the only one).
	best = max(best, window())
	return m.Bias + best
}

// Score returns s's calibrated probability of being (or holding) an
// injection: Platt scaling of its most suspicious window's logit.
func (m *Model) Score(s string) float64 {
	if len(m.W) == 0 {
		return 0
	}
	z := float64(m.A)*float64(m.Logit(s)) + float64(m.B)
	return 1 / (1 + math.Exp(-z))
}
