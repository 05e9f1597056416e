// Package canon produces the RFC 8785 JSON Canonicalization Scheme (JCS)
// form that ACS signatures, request and entry hashes and approval keys are
// computed over. JSON text goes through jsontext.Value.Canonicalize from
// github.com/go-json-experiment/json (the mirror of encoding/json/v2),
// which implements RFC 8785 directly and measured 3× faster than the
// re-parse of gowebpki/jcs with one allocation (BenchmarkCanonical); decoded
// values are written in JCS form directly with its string quoting and
// number formatting (Marshal).
package canon

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/jsonappend"

	"github.com/go-json-experiment/json/jsontext"
)

// Transform returns the JCS form of the JSON text b (b is not changed).
func Transform(b []byte) ([]byte, error) {
	v := jsontext.Value(append([]byte(nil), b...))
	if err := v.Canonicalize(); err != nil {
		return nil, err
	}
	return v, nil
}

// Marshal returns the JCS form of v as encoding/json encodes it (numbers
// decoded as json.Number keep their text until canonicalized). The decoded
// JSON values ACS messages are made of (maps, slices, strings, float64,
// json.Number, booleans, nil, and the int, []string and json.RawMessage the
// handler adds: a count, reason codes, an id as received) are written in
// JCS form directly (appendJCS: RFC 8785's string escaping and ECMAScript
// number form, members sorted by UTF-16 code units); any other value, or one appendJCS is unsure of
// (invalid UTF-8, a number out of float64's range), goes the longer way:
// encoding/json's bytes (jsonappend.Value) canonicalized by
// jsontext. Marshal runs four times an ACS step (a signature checked and
// made, the request and entry hashes); on an ACS request the direct path
// takes 0.9 µs and one allocation, the longer way 2.7 µs and nine
// (BenchmarkMarshal). FuzzMarshalDirect holds the two to the same bytes.
func Marshal(v any) ([]byte, error) {
	if b, ok := appendJCS(make([]byte, 0, 512), v); ok {
		return b, nil
	}
	b, err := jsonappend.Value(make([]byte, 0, 512), v)
	if err != nil {
		return nil, err
	}
	val := jsontext.Value(b)
	if err := val.Canonicalize(); err != nil {
		return nil, err
	}
	return val, nil
}

// appendJCS appends the JCS form of v; false when v holds a type it does
// not write, or a value it cannot be sure of (the caller then takes
// Marshal's longer way, which also reports the errors).
func appendJCS(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if x {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		b, err := jsontext.AppendQuote(dst, x)
		return b, err == nil
	case float64:
		return appendNumber(dst, x)
	case int:
		return appendNumber(dst, float64(x)) // as encoding/json's digits parsed back
	case int64:
		return appendNumber(dst, float64(x))
	case json.RawMessage:
		// JSON as it came (an id, a payload): canonicalized where it is
		// written. JCS is the same within a document as alone.
		if len(x) == 0 {
			return dst, false // nil is null, empty is an error: the longer way says
		}
		start := len(dst)
		val := jsontext.Value(append(dst, x...)[start:])
		if err := val.Canonicalize(); err != nil {
			return dst, false
		}
		return append(dst[:start], val...), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return dst, false
		}
		return appendNumber(dst, f)
	case []any:
		return appendArray(dst, x)
	case []string: // reason codes, profiles
		return appendArray(dst, x)
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), true
		}
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = jsontext.AppendQuote(dst, k); err != nil {
				return dst, false
			}
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendJCS(dst, x[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// appendArray writes x in JCS form (null when nil).
func appendArray[T any](dst []byte, x []T) ([]byte, bool) {
	if x == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	for i, e := range x {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendJCS(dst, e); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// appendNumber writes f in ECMAScript's form (RFC 8785 §3.2.2.3), -0 as 0;
// false for NaN and the infinities, which JSON cannot hold.
func appendNumber(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	if f == 0 {
		f = 0 // -0 is 0
	}
	return jsontext.AppendFloat(dst, f, 64), true
}

// compareUTF16 orders a and b by their UTF-16 code units, as RFC 8785 §3.2.3
// sorts member names. It differs from byte order only where a code point
// past U+FFFF (two surrogates, 0xD800-0xDFFF) meets one in U+E000-U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if c := cmp.Compare(ua[0], ub[0]); c != 0 {
				return c
			}
			return cmp.Compare(ua[1], ub[1])
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Units is r's UTF-16 code units, the second 0 for one in the BMP.
func utf16Units(r rune) [2]uint16 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return [2]uint16{uint16(hi), uint16(lo)}
	}
	return [2]uint16{uint16(r), 0}
}
