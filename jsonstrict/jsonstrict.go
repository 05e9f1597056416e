// Package jsonstrict refuses JSON that different readers read differently,
// so that what warden's policies see is exactly what it forwards: an object
// with a duplicate key (encoding/json keeps the last value, many readers
// the first), with two keys that differ only in case (Go's encoding/json
// matches struct fields case-insensitively, so a Go upstream would read the
// other one), invalid UTF-8, or a lone UTF-16 surrogate escape (both decode
// to U+FFFD here and to something else elsewhere).
//
// One parser (Parser) applies these rules for every surface: the AOS
// endpoint parses its requests with it in a single pass, and Check runs it
// without building values on the JSON every other surface forwards or
// decodes from a client (Decode and DecodeOpen first, for a body decoded
// into a struct).
package jsonstrict

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
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

// SyntaxError is where a Parser found that its text is not JSON; it is
// ErrSyntax (errors.Is).
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Is makes a SyntaxError match ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Check reports the first ambiguity of data (a key problem first, then
// invalid UTF-8, then a lone surrogate) as an *Error, or an error
// wrapping ErrSyntax when data is not one JSON value; nil when every reader
// reads data alike. (A Parser's End reports the first problem in the text
// instead, naming the string and the offset of an encoding problem.)
func Check(data []byte) error {
	p := checker(data)
	defer p.release()
	if _, err := p.value(); err != nil || p.rest() != nil {
		return fmt.Errorf("%w", ErrSyntax)
	}
	switch {
	case p.keyAmb != nil:
		return p.keyAmb
	case p.badUTF8:
		return &Error{Msg: "invalid UTF-8"}
	case p.surrogate > 0:
		off := p.surrogate - 1
		return &Error{Msg: fmt.Sprintf("a lone surrogate escape %s at offset %d", p.s[off:off+6], off)}
	}
	return nil
}

// checkers are the parsers of Check and Members.
var checkers = sync.Pool{New: func() any { return new(Parser) }}

// checker returns a pooled parser set to check data, as deep as
// encoding/json reads, building no values; release puts it back.
func checker(data []byte) *Parser {
	p := checkers.Get().(*Parser)
	*p = Parser{s: unsafe.String(unsafe.SliceData(data), len(data)), max: jsonMaxDepth, check: true,
		path: p.path[:0], keys: p.keys[:0], vals: p.vals[:0]}
	return p
}

// release puts a parser of checker back in the pool, unless its scratch
// grew large.
func (p *Parser) release() {
	if p.Scratch() <= 1024 {
		p.Reset()
		checkers.Put(p)
	}
}

// smallObject is the member count up to which keys are compared pairwise;
// larger objects use a map of folded keys (no quadratic cost).
const smallObject = 16

// Clash is the key rule of an object, for keys met one at a time: it
// returns the index in keys of the key equal to k or differing from it
// only in case, or -1. keys must be distinct so (there is then at most
// one such key); when Clash returns -1, the caller appends k to keys
// before the next call. Up to smallObject keys are compared pairwise;
// past them, *folded maps their FoldKeys to their indexes: nil before the
// first call, kept by the caller across the calls for one list of keys.
func Clash(keys []string, folded *map[string]int, k string) int {
	if len(keys) < smallObject {
		for j, o := range keys {
			if strings.EqualFold(o, k) {
				return j
			}
		}
		return -1
	}
	if *folded == nil {
		*folded = make(map[string]int, 2*len(keys))
		for j, o := range keys {
			(*folded)[FoldKey(o)] = j
		}
	}
	fk := FoldKey(k)
	if j, ok := (*folded)[fk]; ok {
		return j
	}
	(*folded)[fk] = len(keys)
	return -1
}

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
