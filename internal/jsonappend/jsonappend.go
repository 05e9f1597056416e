package jsonappend

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// jsonHex is the lower-case hex encoding/json writes in \u00XX escapes.
const jsonHex = "0123456789abcdef"

// jsonSafe[b] says ASCII byte b is written as it is inside a JSON string:
// printable ASCII except the quote, the backslash and the HTML characters
// <, > and & (encoding/json escapes those by default).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = true
	}
	for _, b := range `"\<>&` {
		t[b] = false
	}
	return t
}()

// String appends s to dst as a JSON string, escaped as
// encoding/json escapes it: \" \\ \b \f \n \r \t, other control
// characters and < > & as \u00XX (lower-case hex), each byte of invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 as \u2028 and \u2029.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to copy
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Strings appends ss as a JSON array of strings; nil is null,
// as encoding/json writes a nil slice.
func Strings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = String(dst, s)
	}
	return append(dst, ']')
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest decimal that reads back as f, in exponent form below 1e-6 and
// from 1e21 on (magnitudes), with the exponent's leading zero dropped
// (1e-07 is written 1e-7). NaN and infinities are an error, as in
// encoding/json.
func appendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		// strconv writes at least two exponent digits: e-07 becomes e-7.
		if e := dst[n:]; len(e) >= 4 && e[len(e)-4] == 'e' && e[len(e)-3] == '-' && e[len(e)-2] == '0' {
			e[len(e)-2] = e[len(e)-1]
			dst = dst[:len(dst)-1]
		}
		return dst, nil
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
}

// jsonPool holds the buffers Marshal and ViewsJSON encode into before
// copying the bytes out; maxPooledJSON keeps one large value's buffer out
// of it.
var jsonPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledJSON = 64 << 10

// Marshal returns Value's encoding of v in a slice of its own
// (one allocation, of the encoding's size), or nil if v does not encode:
// json.Marshal's bytes, with its error dropped.
func Marshal(v any) []byte {
	return Pooled(func(dst []byte) ([]byte, error) { return Value(dst, v) })
}

// Pooled runs enc on a pooled buffer and returns a copy of what it
// appended, nil on error.
func Pooled(enc func([]byte) ([]byte, error)) []byte {
	bp := jsonPool.Get().(*[]byte)
	b, err := enc((*bp)[:0])
	var out []byte
	if err == nil {
		out = append(make([]byte, 0, len(b)), b...)
	}
	if cap(b) <= maxPooledJSON {
		*bp = b[:0]
		jsonPool.Put(bp)
	}
	return out
}

// maxAppendDepth bounds how deep Value recurses into maps and
// slices; a deeper value (or a cyclic one) is handed to encoding/json, which
// writes the same bytes or reports the cycle.
const maxAppendDepth = 256

// Value appends v as encoding/json's Marshal writes it. The values
// a JSON decoder produces (nil, bool, float64, string, []any and
// map[string]any, members in key order) and []string are encoded here; any
// other type is marshaled by encoding/json and its bytes appended. On error
// (a NaN, an unsupported type) dst holds a partial value.
func Value(dst []byte, v any) ([]byte, error) {
	return appendJSONValue(dst, v, 0)
}

func appendJSONValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxAppendDepth {
		return Marshaled(dst, v)
	}
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return String(dst, t), nil
	case float64:
		return appendJSONFloat(dst, t)
	case bool:
		return strconv.AppendBool(dst, t), nil
	case map[string]any:
		return Object(dst, t, depth)
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSONValue(dst, x, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		return Strings(dst, t), nil
	}
	return Marshaled(dst, v)
}

// keysPool holds the key slices Object sorts members by.
var keysPool = sync.Pool{New: func() any { s := make([]string, 0, 16); return &s }}

// maxPooledKeys keeps a huge object's key slice out of keysPool.
const maxPooledKeys = 1024

func Object(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	switch len(m) {
	case 0:
		return append(dst, '{', '}'), nil
	case 1: // no keys to sort
		for k, x := range m {
			var err error
			dst = String(append(dst, '{'), k)
			if dst, err = appendJSONValue(append(dst, ':'), x, depth+1); err != nil {
				return dst, err
			}
			return append(dst, '}'), nil
		}
	}
	kp := keysPool.Get().(*[]string)
	keys := (*kp)[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json sorts members by key, in byte order
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = String(dst, k)
		if dst, err = appendJSONValue(append(dst, ':'), m[k], depth+1); err != nil {
			break
		}
	}
	if cap(keys) <= maxPooledKeys {
		clear(keys)
		*kp = keys[:0]
		keysPool.Put(kp)
	}
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// Marshaled appends encoding/json's encoding of v.
func Marshaled(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
