package jsonappend

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/jsontest"
)

// TestAppendJSONValue checks single values against encoding/json, the
// edge cases named (the float cutoffs, escapes, every byte) and random ones.
func TestAppendJSONValue(t *testing.T) {
	cases := []any{
		nil, true, false, "", `"\`, "<>&", "\u2028\u2029", "\xff\xfe", "a\x00b\x1f\x7f",
		0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, 1.5e300, 5e-324, 123456789012345678.0,
		map[string]any{}, map[string]any(nil), []any{}, []any(nil), []string(nil), []string{},
		map[string]any{"b": 1.0, "a": []any{"x", nil}, "A": map[string]any{"z": true, "é": "<"}},
		7, json.Number("3.25"), struct{ X []int }{[]int{1}},
	}
	for b := range 256 { // every byte alone, as a string and as a key
		cases = append(cases, string([]byte{byte(b)}), map[string]any{string([]byte{byte(b)}): string([]byte{'x', byte(b)})})
	}
	for r := range rune(0x3000) { // every rune of the first planes
		cases = append(cases, string(r))
	}
	g := jsontest.Gen{R: rand.New(rand.NewPCG(5, 6))}
	for range 20000 {
		cases = append(cases, g.Val(0))
	}
	for i, v := range cases {
		want, werr := json.Marshal(v)
		got, gerr := Value(nil, v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("case %d (%#v): error %v, encoding/json's %v", i, v, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d (%#v):\n got %s\nwant %s", i, v, got, want)
		}
	}
}

// TestAppendJSONValueDeep checks that a value deeper than maxAppendDepth is
// still encoded as encoding/json encodes it, and that a cycle is an error
// (as encoding/json reports it) rather than a stack overflow.
func TestAppendJSONValueDeep(t *testing.T) {
	deep := any("leaf")
	for i := range 3 * maxAppendDepth {
		if i%2 == 0 {
			deep = []any{deep}
		} else {
			deep = map[string]any{"k": deep}
		}
	}
	want, err := json.Marshal(deep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Value(nil, deep)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("deep value: %v, equal %v", err, bytes.Equal(got, want))
	}
	cyc := map[string]any{}
	cyc["self"] = cyc
	if _, err := Value(nil, cyc); err == nil {
		t.Fatal("a cyclic map encoded without an error")
	}
}

// FuzzAppendJSONString checks arbitrary bytes against encoding/json, as a
// string and as an object key.
func FuzzAppendJSONString(f *testing.F) {
	for _, p := range jsontest.Pieces {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(map[string]string{s: s})
		got := append(String([]byte("{"), s), ':')
		got = append(String(got, s), '}')
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("%q: encoded to invalid UTF-8 %q", s, got)
		}
	})
}

// FuzzAppendJSONFloat checks arbitrary float64 bit patterns against
// encoding/json.
func FuzzAppendJSONFloat(f *testing.F) {
	for _, v := range []float64{0, 1e-6, 1e-7, 1e21, 1e20, -2.5, 5e-324} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		want, werr := json.Marshal(v)
		got, gerr := appendJSONFloat(nil, v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) && werr == nil {
			t.Fatalf("%v: %s (%v), encoding/json %s (%v)", v, got, gerr, want, werr)
		}
	})
}
