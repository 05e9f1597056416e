package jsonstrict

import (
	"fmt"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of arrays and objects a Parser reads, so that
// no input can exhaust the stack. Check reads as deep as encoding/json
// (jsonMaxDepth), so that it refuses as a syntax error only what
// json.Valid refuses.
const (
	maxDepth     = 1000
	jsonMaxDepth = 10000
)

// Parser is the strict JSON parser: one pass over the text that checks its
// syntax, applies the key rules of the package and builds the values
// encoding/json builds (map[string]any, []any, string, float64, bool and
// nil). Strings without escapes are substrings of the text, not copies: the
// text must not change while the values are in use. Strings, numbers and
// arrays are boxed from slabs (box.go).
//
// What encoding/json reads differently from other readers does not stop
// the parse: it is recorded, and End reports the first one found (an
// *Error), once the text is known to be JSON. Text that is not JSON is a
// *SyntaxError wherever the ambiguity was.
//
// The AOS endpoint walks a request with it (walk.go) and keeps the raw text
// of the members it needs as byte spans instead of re-encoding them. Check
// and Members run the same parse without building values.
type Parser struct {
	s     string
	i     int
	depth int
	max   int  // the nesting limit
	check bool // Check: build no values
	path  []pathElem
	// inKey is set while an object key is parsed (for errors).
	inKey bool
	// amb is the first ambiguity in the text; keyAmb the first key
	// problem, badUTF8 and surrogate (offset+1, 0 for none) the first
	// string problems, which Check reports in that order.
	amb       *Error
	keyAmb    *Error
	badUTF8   bool
	surrogate int
	// keys and vals are scratch stacks: the members of the objects and the
	// elements of the arrays being parsed, from the outermost open one in,
	// until each ends and is made at its size. They hold at most one entry
	// per member or element of the text.
	keys []string
	vals []any
	// box holds the strings, numbers and arrays of the values built, a
	// chunk of each at a time (box.go).
	box boxes
}

// Init starts a parse of s, keeping the scratch buffers of an earlier one.
func (p *Parser) Init(s string) {
	*p = Parser{s: s, max: maxDepth, path: p.path[:0], keys: p.keys[:0], vals: p.vals[:0]}
	// Most texts have at most one string value per four quotes (a key and
	// a value each): the first chunk of boxed strings fits them.
	p.box.hint = strings.Count(s, `"`)/4 + 8
}

// Reset drops every reference the parser holds into a text and its values,
// keeping its scratch buffers, so that a pool can keep it.
func (p *Parser) Reset() {
	path, keys, vals := p.path[:cap(p.path)], p.keys[:cap(p.keys)], p.vals[:cap(p.vals)]
	clear(path)
	clear(keys)
	clear(vals)
	*p = Parser{path: path[:0], keys: keys[:0], vals: vals[:0]}
}

// Scratch is the largest capacity of the parser's scratch buffers, in
// entries: what a pool would keep.
func (p *Parser) Scratch() int { return max(cap(p.path), cap(p.keys), cap(p.vals)) }

// pathElem is one step of a JSON path: an object key, or an array index
// (idx >= 0).
type pathElem struct {
	key string
	idx int
}

// where renders the current path: keys joined by dots, indexes as [i]; a
// key that begins with '[' takes no dot (as Check's paths were first
// written: reference_test.go).
func (p *Parser) where() string {
	var b []byte
	for _, e := range p.path {
		if e.idx >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.idx), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 && !strings.HasPrefix(e.key, "[") {
			b = append(b, '.')
		}
		b = append(b, e.key...)
	}
	return string(b)
}

func (p *Parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *Parser) ws() {
	s, i := p.s, p.i
	for i < len(s) {
		switch s[i] {
		case ' ':
			// Indentation comes in runs: skip them eight spaces at a time.
			if i+8 <= len(s) && load8(s, i) == lsb*' ' {
				i += 8
				continue
			}
			i++
		case '\t', '\n', '\r':
			i++
		default:
			p.i = i
			return
		}
	}
	p.i = i
}

// value parses any JSON value.
func (p *Parser) value() (any, error) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		m, err := p.object(nil)
		if m == nil {
			return nil, err // not map[string]any(nil): Check builds no map
		}
		return m, err
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil || p.check {
			return nil, err
		}
		return p.box.str(s), nil
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.fail("invalid character %q looking for beginning of value", c)
	}
}

func (p *Parser) literal(lit string) error {
	if len(p.s)-p.i < len(lit) || p.s[p.i:p.i+len(lit)] != lit {
		return p.fail("invalid literal, expected %s", lit)
	}
	p.i += len(lit)
	return nil
}

func (p *Parser) enter() error {
	p.depth++
	if p.depth > p.max {
		return p.fail("nesting deeper than %d levels", p.max)
	}
	return nil
}

// openObject consumes the '{' at p.i; empty reports an empty object (its
// '}' consumed too).
func (p *Parser) openObject() (empty bool, err error) {
	if err := p.enter(); err != nil {
		return false, err
	}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return true, nil
	}
	return false, nil
}

// member parses a member's key and its ':', leaving p.i at the value: the
// key is checked against the keys of its object so far (p.keys[kmark:])
// and pushed on them and on the path.
func (p *Parser) member(kmark int, folded *map[string]int) (string, error) {
	p.ws()
	if p.i >= len(p.s) {
		return "", p.fail("unexpected end of JSON input")
	}
	if p.s[p.i] != '"' {
		return "", p.fail("invalid character %q looking for an object key", p.s[p.i])
	}
	p.inKey = true
	k, err := p.str()
	p.inKey = false
	if err != nil {
		return "", err
	}
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		return "", p.fail("expected ':' after object key")
	}
	p.i++
	p.ws()
	p.checkKey(p.keys[kmark:], folded, k)
	p.keys = append(p.keys, k)
	p.path = append(p.path, pathElem{key: k, idx: -1})
	return k, nil
}

// next consumes what follows a member's value or an array element: ','
// (more) or the closing byte of its container, close ('}' or ']').
func (p *Parser) next(close byte) (more bool, err error) {
	p.ws()
	if i := p.i; i < len(p.s) {
		if c := p.s[i]; c == ',' {
			p.i = i + 1
			return true, nil
		} else if c == close {
			p.i = i + 1
			p.depth--
			return false, nil
		}
	}
	return false, p.nextErr(close)
}

// nextErr is next's error, apart so that next stays small.
func (p *Parser) nextErr(close byte) error {
	switch {
	case p.i >= len(p.s):
		return p.fail("unexpected end of JSON input")
	case close == '}':
		return p.fail("invalid character %q after object value", p.s[p.i])
	}
	return p.fail("invalid character %q after array element", p.s[p.i])
}

// object parses an object at p.i (which holds '{'). With spans non-nil, it
// appends the raw span of every member's value to *spans. The members are
// gathered on the parser's scratch stacks and the map is made once, at its
// size, when the object ends (the last of duplicate keys wins, as in
// encoding/json). Check builds no map (nil).
func (p *Parser) object(spans *[]Span) (map[string]any, error) {
	empty, err := p.openObject()
	if err != nil {
		return nil, err
	}
	if empty {
		if p.check {
			return nil, nil
		}
		return make(map[string]any), nil
	}
	kmark, vmark := len(p.keys), len(p.vals)
	var folded map[string]int // folded key → index in the object, past smallObject members (Clash)
	for more := true; more; {
		k, err := p.member(kmark, &folded)
		if err != nil {
			return nil, err
		}
		start := p.i
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		if spans != nil {
			*spans = append(*spans, Span{k, start, p.i})
		}
		if !p.check {
			p.vals = append(p.vals, v)
		}
		if more, err = p.next('}'); err != nil {
			return nil, err
		}
	}
	keys, vals := p.keys[kmark:], p.vals[vmark:]
	var m map[string]any
	if !p.check {
		m = make(map[string]any, len(keys))
		for i, k := range keys {
			m[k] = vals[i]
		}
	}
	clear(keys)
	clear(vals)
	p.keys, p.vals = p.keys[:kmark], p.vals[:vmark]
	return m, nil
}

// checkKey records an ambiguity when keys, the keys of the object being
// parsed so far, hold k already, or a key that differs from it only in
// case (Clash). Until a key problem is found, keys are distinct.
func (p *Parser) checkKey(keys []string, folded *map[string]int, k string) {
	if p.keyAmb != nil {
		return // the text is refused already
	}
	switch j := Clash(keys, folded, k); {
	case j < 0:
	case keys[j] == k:
		p.keyProblem(fmt.Sprintf("duplicate key %q", k))
	default:
		p.keyProblem(fmt.Sprintf("keys %q and %q differ only in case", keys[j], k))
	}
}

// keyProblem records the first key problem, in the object at the path.
func (p *Parser) keyProblem(msg string) {
	p.keyAmb = &Error{Path: p.where(), Msg: msg}
	if p.amb == nil {
		p.amb = p.keyAmb
	}
}

// array parses an array at p.i (which holds '[') into a boxed []any. The
// elements are gathered on the parser's scratch stack and the slice is
// made once, at its length, when the array ends. Check builds no slice.
func (p *Parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		if p.check {
			return nil, nil
		}
		return p.box.array(nil), nil
	}
	vmark := len(p.vals)
	for n := 0; ; n++ {
		p.path = append(p.path, pathElem{idx: n})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		if !p.check {
			p.vals = append(p.vals, v)
		}
		if more, err := p.next(']'); err != nil {
			return nil, err
		} else if !more {
			if p.check {
				return nil, nil
			}
			vals := p.vals[vmark:]
			a := p.box.array(vals)
			clear(vals)
			p.vals = p.vals[:vmark]
			return a, nil
		}
	}
}

// number parses a number with the JSON grammar into a float64 (Check only
// checks the grammar: encoding/json's reader refuses an out-of-range
// number where it decodes it, as a value that does not fit).
func (p *Parser) number() (any, error) {
	s, i := p.s, p.i
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		p.i = i
		return nil, p.fail("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			p.i = i
			return nil, p.fail("invalid number: no digits after decimal point")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			p.i = i
			return nil, p.fail("invalid number: no digits in exponent")
		}
	}
	if p.check {
		p.i = i
		return nil, nil
	}
	f, err := strconv.ParseFloat(s[p.i:i], 64)
	if err != nil {
		return nil, p.fail("number %s out of range", s[p.i:i])
	}
	p.i = i
	return p.box.num(f), nil
}
