// Package jsonstrict refuses JSON that different readers read differently,
// so that what warden's policies see is exactly what it forwards: an object
// with a duplicate key (encoding/json keeps the last value, many readers
// the first), with two keys that differ only in case (Go's encoding/json
// matches struct fields case-insensitively, so a Go upstream would read the
// other one), invalid UTF-8, or a lone UTF-16 surrogate escape (both decode
// to U+FFFD here and to something else elsewhere).
//
// Check validates raw JSON text; every surface that forwards bytes or
// decodes a payload from a client runs it first (the AOS endpoint's own
// parser applies the same key rules in its single pass).
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Error is an ambiguity found in the JSON text: Path names the object (or
// string) it is in, as `params.arguments` or `params.items[2]` ("" for the
// top level).
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg + " at the top level"
	}
	return e.Msg + " in " + e.Path
}

// ErrSyntax wraps text that is not JSON at all (a parse error, not an
// ambiguity).
var ErrSyntax = errors.New("not valid JSON")

// Check reports the first ambiguity of data (a key problem first, then
// invalid UTF-8, then a lone surrogate) as an *Error, or an error
// wrapping ErrSyntax when data is not one JSON value; nil when every reader
// reads data alike.
func Check(data []byte) error {
	if !json.Valid(data) {
		return fmt.Errorf("%w", ErrSyntax)
	}
	sc := scanner{data: data}
	sc.skipSpace()
	if err := sc.value(); err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "invalid UTF-8"}
	}
	return checkSurrogates(data)
}

// scanner walks JSON text that json.Valid accepted, byte by byte, checking
// each object's keys; the path to the current value is kept as a stack for
// error messages. It replaced a walk over encoding/json's Decoder.Token,
// which allocated for every token (10 % of an ACS step's CPU under load).
type scanner struct {
	data []byte
	i    int
	path []pathElem
}

// pathElem is a key (index < 0) or an array index.
type pathElem struct {
	key   string
	index int
}

func (sc *scanner) skipSpace() {
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value checks the value at sc.i (after whitespace) and moves past it.
func (sc *scanner) value() error {
	switch sc.data[sc.i] {
	case '{':
		return sc.object()
	case '[':
		sc.i++
		sc.skipSpace()
		if sc.data[sc.i] == ']' {
			sc.i++
			return nil
		}
		for n := 0; ; n++ {
			if end, err := sc.member(pathElem{index: n}, ']'); end || err != nil {
				return err
			}
		}
	case '"':
		sc.i = stringEnd(sc.data, sc.i)
	default: // a number, true, false or null
		for sc.i < len(sc.data) {
			switch sc.data[sc.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return nil
			}
			sc.i++
		}
	}
	return nil
}

// object checks the object at sc.i: no two keys equal, or equal under
// case folding, as encoding/json decodes them.
func (sc *scanner) object() error {
	sc.i++ // '{'
	sc.skipSpace()
	if sc.data[sc.i] == '}' {
		sc.i++
		return nil
	}
	var small [smallObject]string
	keys := small[:0]
	var folded map[string]string // folded key → key, past smallObject members
	for {
		end := stringEnd(sc.data, sc.i)
		k := decodeKey(sc.data[sc.i:end])
		sc.i = end
		if len(keys) < smallObject {
			for _, o := range keys {
				switch {
				case o == k:
					return &Error{Path: sc.render(), Msg: fmt.Sprintf("duplicate key %q", k)}
				case strings.EqualFold(o, k):
					return &Error{Path: sc.render(), Msg: fmt.Sprintf("keys %q and %q differ only in case", o, k)}
				}
			}
		} else {
			if folded == nil {
				folded = make(map[string]string, 2*len(keys))
				for _, o := range keys {
					folded[FoldKey(o)] = o
				}
			}
			fk := FoldKey(k)
			if o, ok := folded[fk]; ok {
				if o == k {
					return &Error{Path: sc.render(), Msg: fmt.Sprintf("duplicate key %q", k)}
				}
				return &Error{Path: sc.render(), Msg: fmt.Sprintf("keys %q and %q differ only in case", o, k)}
			}
			folded[fk] = k
		}
		keys = append(keys, k)
		sc.skipSpace()
		sc.i++ // ':'
		sc.skipSpace()
		if end, err := sc.member(pathElem{key: k, index: -1}, '}'); end || err != nil {
			return err
		}
	}
}

// member checks the value at sc.i as the member e of its object or array
// and moves past the ',' after it (end false) or the closer (end true).
func (sc *scanner) member(e pathElem, closer byte) (end bool, err error) {
	sc.path = append(sc.path, e)
	if err := sc.value(); err != nil {
		return false, err
	}
	sc.path = sc.path[:len(sc.path)-1]
	sc.skipSpace()
	c := sc.data[sc.i]
	sc.i++
	if c == closer {
		return true, nil
	}
	sc.skipSpace() // after ','
	return false, nil
}

// stringEnd returns the index just past the string that starts at
// data[i] == '"' (the text is valid JSON: it is terminated).
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i++ // the escaped byte (a \u's hex digits are plain bytes)
		}
	}
	return len(data)
}

// decodeKey returns the key string q (quotes included) as encoding/json
// decodes it: as is, unless it holds an escape or invalid UTF-8, which
// encoding/json decodes (the latter to U+FFFD). A key as is shares q's
// memory: Check keeps it only while it runs (messages copy it).
func decodeKey(q []byte) string {
	raw := q[1 : len(q)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		if len(raw) == 0 {
			return ""
		}
		return unsafe.String(&raw[0], len(raw))
	}
	var k string
	if err := json.Unmarshal(q, &k); err != nil {
		return string(raw) // not reached for valid JSON
	}
	return k
}

// render joins the path: keys with dots, indexes as [i].
func (sc *scanner) render() string {
	var b strings.Builder
	for _, p := range sc.path {
		if p.index >= 0 {
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
			continue
		}
		if b.Len() > 0 && !strings.HasPrefix(p.key, "[") { // as written first (reference_test.go)
			b.WriteByte('.')
		}
		b.WriteString(p.key)
	}
	return b.String()
}

// smallObject is the member count up to which keys are compared pairwise;
// larger objects use a map of folded keys (no quadratic cost).
const smallObject = 16

// FoldKey is a canonical form of s under Unicode simple case folding: two
// keys are equal ignoring case (strings.EqualFold) exactly when their
// FoldKeys are equal.
func FoldKey(s string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		return m
	}, s)
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

// Members calls fn with each member of the object that data holds (JSON
// text Check accepted), in order: the key as encoding/json decodes it and
// the value's raw bytes, until fn returns false. It does not decode
// values, so finding a few members of a large object costs one pass over
// the bytes. Text that is not an object gives no calls; text Check did not
// accept gives some calls or none, never a panic. The key may share
// data's memory: copy it to keep it after fn returns.
func Members(data []byte, fn func(key string, value []byte) bool) {
	sc := scanner{data: data}
	sc.skipSpace()
	if !sc.at('{') {
		return
	}
	sc.i++
	sc.skipSpace()
	for sc.at('"') {
		end := stringEnd(data, sc.i)
		if end >= len(data) {
			return
		}
		k := decodeKey(data[sc.i:end])
		sc.i = end
		sc.skipSpace()
		if !sc.at(':') {
			return
		}
		sc.i++
		sc.skipSpace()
		start := sc.i
		if !sc.skipValue() || !fn(k, data[start:sc.i]) {
			return
		}
		sc.skipSpace()
		if !sc.at(',') {
			return
		}
		sc.i++
		sc.skipSpace()
	}
}

// at reports whether the byte at sc.i is c.
func (sc *scanner) at(c byte) bool { return sc.i < len(sc.data) && sc.data[sc.i] == c }

// skipValue moves past the value at sc.i without checking it; false when
// the text ends first.
func (sc *scanner) skipValue() bool {
	if sc.i >= len(sc.data) {
		return false
	}
	switch sc.data[sc.i] {
	case '{', '[':
		depth := 0
		for ; sc.i < len(sc.data); sc.i++ {
			switch sc.data[sc.i] {
			case '"':
				sc.i = stringEnd(sc.data, sc.i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					sc.i++
					return true
				}
			}
		}
		return false
	case '"':
		sc.i = stringEnd(sc.data, sc.i)
		return sc.i <= len(sc.data)
	default: // a number, true, false or null
		start := sc.i
		for sc.i < len(sc.data) {
			switch sc.data[sc.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return sc.i > start
			}
			sc.i++
		}
		return sc.i > start
	}
}

// Decode decodes data, one JSON value, into v as every JSON body warden
// reads is decoded: refused when Check refuses it (an *Error: a duplicate
// key, keys that differ only in case, invalid UTF-8, a lone surrogate; or an
// error wrapping ErrSyntax), and, when v points to a struct, when a member
// of the top-level object is not one of the struct's fields, spelled
// exactly as its json name (an *Error as well): encoding/json would match
// "Decision" to the field "decision", a reader of the body's text would not.
// A value that does not fit v's types is encoding/json's error.
func Decode(data []byte, v any) error { return decode(data, v, false) }

// DecodeOpen is Decode for a body that may carry other keys than v's
// fields, ignored as encoding/json ignores them (the hooks dispatch
// envelope): a key that names a field only in another case is still
// refused.
func DecodeOpen(data []byte, v any) error { return decode(data, v, true) }

func decode(data []byte, v any, open bool) error {
	if err := Check(data); err != nil {
		var anyValue any
		if errors.Is(err, ErrSyntax) {
			if jerr := json.Unmarshal(data, &anyValue); jerr != nil { // where the text stops being JSON
				return fmt.Errorf("%w: %v", ErrSyntax, jerr)
			}
		}
		return err
	}
	if names := fieldNames(v); names != nil {
		var unknown string
		found := false
		Members(data, func(k string, _ []byte) bool {
			if names[k] {
				return true
			}
			if !open || nameInCase(names, k) {
				unknown, found = strings.Clone(k), true
			}
			return !found
		})
		if found {
			want := make([]string, 0, len(names))
			for n := range names {
				want = append(want, strconv.Quote(n))
			}
			slices.Sort(want)
			msg := fmt.Sprintf("unknown key %q", unknown)
			if len(want) > 0 {
				msg += " (the keys are " + strings.Join(want, ", ") + ", spelled exactly)"
			}
			return &Error{Msg: msg}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !open {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

// nameInCase reports whether k is one of names in another case.
func nameInCase(names map[string]bool, k string) bool {
	for n := range names {
		if strings.EqualFold(n, k) {
			return true
		}
	}
	return false
}

// fieldNames returns the json names of the exported fields of the struct v
// points to (nil when v does not point to a struct): a field's tag name,
// else its Go name; fields tagged "-" are not named. Embedded structs'
// fields are not looked into (no body warden reads has one).
func fieldNames(v any) map[string]bool {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	t = t.Elem()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	return names
}
