package jsonstrict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkRef is Check as it was written first, over encoding/json's
// Decoder.Token: the reference the byte scanner must agree with, error for
// error.
func checkRef(data []byte) error {
	if !json.Valid(data) {
		return fmt.Errorf("%w", ErrSyntax)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := walkRef(d, nil); err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "invalid UTF-8"}
	}
	return checkSurrogates(data)
}

func walkRef(d *json.Decoder, path []string) error {
	t, err := d.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	switch t {
	case json.Delim('{'):
		var keys []string
		folded := map[string]string{}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrSyntax, err)
			}
			k := kt.(string)
			for _, o := range keys { // pairwise for every size: the plain definition
				switch {
				case o == k:
					return &Error{Path: renderRef(path), Msg: fmt.Sprintf("duplicate key %q", k)}
				case strings.EqualFold(o, k):
					return &Error{Path: renderRef(path), Msg: fmt.Sprintf("keys %q and %q differ only in case", o, k)}
				}
			}
			folded[FoldKey(k)] = k
			keys = append(keys, k)
			if err := walkRef(d, append(path, k)); err != nil {
				return err
			}
		}
		_, err = d.Token()
	case json.Delim('['):
		for i := 0; d.More(); i++ {
			if err := walkRef(d, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
				return err
			}
		}
		_, err = d.Token()
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return nil
}

// checkSurrogates finds a \u escape of a UTF-16 surrogate that is not part
// of a pair, in the strings of valid JSON text.
func checkSurrogates(data []byte) error {
	in := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !in {
			if c == '"' {
				in = true
			}
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 < len(data) && data[i+1] == 'u' && i+5 < len(data) {
				r, _ := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
				switch {
				case r >= 0xD800 && r <= 0xDBFF:
					lo := uint64(0)
					if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
						lo, _ = strconv.ParseUint(string(data[i+8:i+12]), 16, 32)
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return &Error{Msg: fmt.Sprintf("a lone surrogate escape \\u%s at offset %d", data[i+2:i+6], i)}
					}
					i += 11
				case r >= 0xDC00 && r <= 0xDFFF:
					return &Error{Msg: fmt.Sprintf("a lone surrogate escape \\u%s at offset %d", data[i+2:i+6], i)}
				default:
					i += 5
				}
				continue
			}
			i++ // the escaped character
		}
	}
	return nil
}

func renderRef(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// same reports whether two Check results agree: both nil, or the same
// message (a syntax error's text is encoding/json's; only its kind counts).
func same(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if sa, sb := strings.HasPrefix(a.Error(), ErrSyntax.Error()), strings.HasPrefix(b.Error(), ErrSyntax.Error()); sa || sb {
		return sa && sb
	}
	return a.Error() == b.Error()
}

// TestCheckAgreesWithReference: the byte scanner gives the reference's
// answer on random JSON texts built to collide: few distinct keys, case
// variants, escaped spellings, objects past smallObject members, deep
// nesting, whitespace, invalid UTF-8 and lone surrogates.
func TestCheckAgreesWithReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	keys := []string{`"a"`, `"A"`, `"b"`, `"\u0061"`, `"K"`, `"k"`, `"\u212a"`, `"é"`, `"É"`, `"x\ty"`, `"[0]"`, "\"\xff\"", "\"\xfe\"", `"\ud800"`, `"\"q\""`}
	ws := func(b *strings.Builder) {
		for range rnd.IntN(3) {
			b.WriteByte(" \t\n\r"[rnd.IntN(4)])
		}
	}
	var gen func(b *strings.Builder, depth int)
	gen = func(b *strings.Builder, depth int) {
		ws(b)
		switch n := rnd.IntN(9); {
		case depth > 4 || n < 3:
			b.WriteString([]string{`1`, `-2.5e3`, `true`, `false`, `null`, `"s"`, `"\\"`, `"\"}"`, "\"a\xffb\"", `"\ud83d\ude00"`, `"\udc00"`, `"\\ud800"`}[rnd.IntN(12)])
		case n < 6:
			b.WriteByte('{')
			members := rnd.IntN(4)
			if rnd.IntN(6) == 0 {
				members = smallObject + rnd.IntN(4) // past the pairwise comparison
			}
			for i := range members {
				if i > 0 {
					b.WriteByte(',')
				}
				ws(b)
				if members > smallObject && rnd.IntN(8) != 0 {
					fmt.Fprintf(b, `"m%d"`, i) // mostly distinct, so a collision is rare but possible
				} else {
					b.WriteString(keys[rnd.IntN(len(keys))])
				}
				ws(b)
				b.WriteByte(':')
				gen(b, depth+1)
			}
			ws(b)
			b.WriteByte('}')
		default:
			b.WriteByte('[')
			for i := range rnd.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				gen(b, depth+1)
			}
			ws(b)
			b.WriteByte(']')
		}
		ws(b)
	}
	kinds := map[string]int{}
	for range 20000 {
		var b strings.Builder
		gen(&b, 0)
		data := []byte(b.String())
		got, want := Check(data), checkRef(data)
		if !same(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", data, got, want)
		}
		kind := "ok"
		if got != nil {
			kind = strings.SplitN(got.Error(), " ", 2)[0]
		}
		kinds[kind]++
	}
	t.Logf("answers: %v", kinds)
	for _, k := range []string{"ok", "duplicate", "keys", "invalid", "a"} {
		if kinds[k] == 0 {
			t.Errorf("no text gave a %q answer: the generator misses a case (%v)", k, kinds)
		}
	}
}

// FuzzCheckAgrees: on any input the scanner and the reference agree.
func FuzzCheckAgrees(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"B":1,"b":2}}`, `[{"x":"\ud800"}]`, `{"\u0061":1,"a":2}`, "{\"\xff\":1,\"\xfe\":2}", `{"k":[1,{"K":2,"k":3}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Check(data), checkRef(data); !same(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", data, got, want)
		}
	})
}

// BenchmarkCheck: an ACS-sized request through Check (the parser, building
// no values; "scanner" after the byte scanner it replaced, so benchmarks
// compare across the change) and the reference.
func BenchmarkCheck(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":"5f2f0b68","method":"steps/toolCallRequest","params":{"acs_version":"0.1.0","request_id":"4c97c374-6928-45a4-8aaf-2be34931c997","timestamp":"2026-11-25T19:07:20.123Z","metadata":{"agent_id":"agent-1","session_id":"9a7a6a69","turn_id":"t1","step_id":"s1"},"payload":{"tool":{"name":"search","description":"web search"},"arguments":{"q":{"value":"weather <today> é","provenance":{"source":"user"}},"limit":{"value":10},"tags":["a","b","c"]}},"signature":{"alg":"HS256","key_id":"k1","value":"q2V0aGVyIHRoZSBzaWduYXR1cmUgaXMgcmlnaHQgb3Igbm90"}}}`)
	for _, c := range []struct {
		name string
		fn   func([]byte) error
	}{{"scanner", Check}, {"decoder-tokens", checkRef}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.fn(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
