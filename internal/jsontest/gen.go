package jsontest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
)

// gen draws random values for the property tests.
// Gen makes random JSON values for tests that compare an encoder with
// encoding/json: strings of everything JSON escapes, floats at the edges,
// nested objects.
type Gen struct{ R *rand.Rand }

// Pieces are the parts random strings are made of: everything encoding/json
// escapes or treats specially, and ordinary text.
var Pieces = []string{
	"", "a", "Z", "0", " ", "plain text", `"`, `\`, "/", "<", ">", "&", "<script>", "'",
	"\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\u0080", "é", "日本",
	"\u2027", "\u2028", "\u2029", "\u202a", "\U0001F600", "\uFFFD", "\xff", "\xc3", "\xe2\x80",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\\u0041", "rm -rf /",
}

// Str returns a random value of its kind.
func (g Gen) Str() string {
	var b strings.Builder
	for n := g.R.IntN(5); n > 0; n-- {
		if g.R.IntN(4) == 0 {
			b.WriteByte(byte(g.R.IntN(256))) // any byte, valid UTF-8 or not
			continue
		}
		b.WriteString(Pieces[g.R.IntN(len(Pieces))])
	}
	return b.String()
}

// Strs returns a random value of its kind.
func (g Gen) Strs() []string {
	switch g.R.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	s := make([]string, 1+g.R.IntN(3))
	for i := range s {
		s[i] = g.Str()
	}
	return s
}

// float draws numbers around the exponent-form cutoffs (1e-6, 1e21), as
// well as arbitrary bit patterns, zeros and, rarely, NaN and infinities
// (which encoding/json refuses).
// Float returns a random value of its kind.
func (g Gen) Float() float64 {
	switch g.R.IntN(12) {
	case 0:
		return math.Float64frombits(g.R.Uint64()) // may be NaN or ±Inf
	case 1:
		return []float64{0, math.Copysign(0, -1), 1e-6, 1e21, 9.999999999999999e-7, 1e20, 999999999999999900000, 1e-7, 5e-324, math.MaxFloat64, -1e-7, 1e100, 123456789}[g.R.IntN(13)]
	case 2:
		return float64(g.R.Int64N(1<<53)) - 1<<52
	case 3:
		return math.Inf(1 - 2*g.R.IntN(2))
	}
	return (g.R.Float64()*2 - 1) * math.Pow(10, float64(g.R.IntN(60)-30))
}

// val draws a value as a JSON decoder produces it, and now and then one of
// a type the encoder hands to encoding/json.
// Val returns a random value of its kind.
func (g Gen) Val(depth int) any {
	n := 9
	if depth > 3 {
		n = 4 // scalars only
	}
	switch g.R.IntN(n + 1) {
	case 0:
		return nil
	case 1:
		return g.R.IntN(2) == 0
	case 2, 3:
		return g.Str()
	case 4:
		return g.Float()
	case 5:
		return g.Obj(depth + 1)
	case 6:
		if g.R.IntN(5) == 0 {
			return []any(nil)
		}
		a := make([]any, g.R.IntN(4))
		for i := range a {
			a[i] = g.Val(depth + 1)
		}
		return a
	case 7:
		return g.Strs()
	case 8:
		// handed to encoding/json
		return []any{g.R.IntN(1000) - 500, json.Number("12.5e3"), map[string]int{g.Str(): 1}, struct{ A string }{g.Str()}, []byte(g.Str())}[g.R.IntN(5)]
	}
	return map[string]any(nil)
}

// Obj returns a random value of its kind.
func (g Gen) Obj(depth int) map[string]any {
	m := make(map[string]any)
	for n := g.R.IntN(16); n > 0; n-- {
		m[g.Str()] = g.Val(depth)
	}
	return m
}
