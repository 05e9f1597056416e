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
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := walk(d, nil); err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "invalid UTF-8"}
	}
	return checkSurrogates(data)
}

// walk reads one value from d, checking its objects' keys.
func walk(d *json.Decoder, path []string) error {
	t, err := d.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	switch t {
	case json.Delim('{'):
		var keys []string
		var folded map[string]string // folded key → key, past smallObject members
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrSyntax, err)
			}
			k := kt.(string)
			if len(keys) < smallObject {
				for _, o := range keys {
					switch {
					case o == k:
						return &Error{Path: render(path), Msg: fmt.Sprintf("duplicate key %q", k)}
					case strings.EqualFold(o, k):
						return &Error{Path: render(path), Msg: fmt.Sprintf("keys %q and %q differ only in case", o, k)}
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
						return &Error{Path: render(path), Msg: fmt.Sprintf("duplicate key %q", k)}
					}
					return &Error{Path: render(path), Msg: fmt.Sprintf("keys %q and %q differ only in case", o, k)}
				}
				folded[fk] = k
			}
			keys = append(keys, k)
			if err := walk(d, append(path, k)); err != nil {
				return err
			}
		}
		_, err = d.Token() // '}'
	case json.Delim('['):
		for i := 0; d.More(); i++ {
			if err := walk(d, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
				return err
			}
		}
		_, err = d.Token() // ']'
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return nil
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

// render joins a path: keys with dots, indexes as [i].
func render(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
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
