package aos

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/jsonstrict"
)

// maxDepth bounds the nesting of arrays and objects, so that no input can
// exhaust the stack.
const maxDepth = 1000

// parser decodes JSON text into the generic values encoding/json produces
// (map[string]any, []any, string, float64, bool and nil) in a single pass.
// Strings without escapes are substrings of the input, not copies: the input
// must not change while the values are in use. It follows encoding/json's
// rules, save that what encoding/json reads differently from other readers
// makes the body ambiguous (an invalid request): invalid UTF-8 and lone
// surrogates (U+FFFD there), duplicate keys (the last value there) and keys
// that differ only in case. It is the AOS hot path: a request is parsed once,
// and the raw text of the members the endpoint needs (id, params, the
// wrapped protocol message) is recorded as byte spans instead of re-encoded.
type parser struct {
	s     string
	i     int
	depth int
	path  []pathElem // where the value being parsed is, for errors
	// amb is the first ambiguity found; parsing goes on, so that text that
	// is not JSON at all is a parse error wherever the ambiguity was.
	amb *ambiguityError
	// inKey is set while an object key is parsed (for errors).
	inKey bool
	// keys and vals are scratch stacks: the members of the objects and the
	// elements of the arrays being parsed, from the outermost open one in,
	// until each ends and is made at its size. They hold at most one entry
	// per member or element of the body.
	keys []string
	vals []any
	// box holds the strings, numbers and arrays of the values built, a
	// chunk of each at a time (box.go).
	box boxes
}

// ambiguous records the first ambiguity.
func (p *parser) ambiguous(e *ambiguityError) {
	if p.amb == nil {
		p.amb = e
	}
}

// pathElem is one step of a JSON path: an object key, or an array index
// (idx >= 0).
type pathElem struct {
	key string
	idx int
}

// ambiguityError is JSON that readers would read differently: an object
// with a duplicate key, or with two keys that differ only in case (Go's
// encoding/json matches struct fields case-insensitively). It is an invalid
// request, not a parse error: the text is JSON.
type ambiguityError struct {
	path, msg string
}

func (e *ambiguityError) Error() string {
	if e.path == "" {
		return e.msg + " at the top level"
	}
	return e.msg + " in " + e.path
}

// where renders the current path: keys joined by dots, indexes as [i].
func (p *parser) where() string {
	var b []byte
	for _, e := range p.path {
		if e.idx >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.idx), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, e.key...)
	}
	return string(b)
}

// smallObject is the member count up to which duplicate keys are found by
// comparing with each earlier key; larger objects use a map of folded keys.
const smallObject = 16

// span is the raw text s[start:end] of the value of object member key.
type span struct {
	key        string
	start, end int
}

// syntaxError is a malformed-JSON error: a JSON-RPC parse error.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{off: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) ws() {
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

// end checks that only whitespace follows the value just parsed; the text
// being JSON, it then reports the first ambiguity found, if any.
func (p *parser) end() error {
	p.ws()
	if p.i < len(p.s) {
		return p.fail("invalid character %q after top-level value", p.s[p.i])
	}
	if p.amb != nil {
		return p.amb
	}
	return nil
}

// value parses any JSON value.
func (p *parser) value() (any, error) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(nil)
	case c == '[':
		return p.array(nil)
	case c == '"':
		s, err := p.str()
		if err != nil {
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

func (p *parser) literal(lit string) error {
	if len(p.s)-p.i < len(lit) || p.s[p.i:p.i+len(lit)] != lit {
		return p.fail("invalid literal, expected %s", lit)
	}
	p.i += len(lit)
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.fail("nesting deeper than %d levels", maxDepth)
	}
	return nil
}

// openObject consumes the '{' at p.i; empty reports an empty object (its
// '}' consumed too). With key and nextMember it walks an object's members
// for object and for the request envelope (request.go).
func (p *parser) openObject() (empty bool, err error) {
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

// key parses a member's key and its ':', leaving p.i at the value.
func (p *parser) key() (string, error) {
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
	return k, nil
}

// nextMember consumes what follows a member's value: ',' (more members) or
// the closing '}'.
func (p *parser) nextMember() (more bool, err error) {
	p.ws()
	if p.i >= len(p.s) {
		return false, p.fail("unexpected end of JSON input")
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return true, nil
	case '}':
		p.i++
		p.depth--
		return false, nil
	}
	return false, p.fail("invalid character %q after object value", p.s[p.i])
}

// object parses an object at p.i (which holds '{'). With spans non-nil, it
// appends the raw span of every member's value to *spans. The members are
// gathered on the parser's scratch stacks and the map is made once, at its
// size, when the object ends (the last of duplicate keys wins, as in
// encoding/json).
func (p *parser) object(spans *[]span) (map[string]any, error) {
	empty, err := p.openObject()
	if err != nil {
		return nil, err
	}
	if empty {
		return make(map[string]any), nil
	}
	kmark, vmark := len(p.keys), len(p.vals)
	var folded map[string]string // folded key → key, past smallObject members
	for more := true; more; {
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.checkKey(p.keys[kmark:], &folded, k)
		start := p.i
		p.path = append(p.path, pathElem{key: k, idx: -1})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		if spans != nil {
			*spans = append(*spans, span{k, start, p.i})
		}
		p.keys = append(p.keys, k)
		p.vals = append(p.vals, v)
		if more, err = p.nextMember(); err != nil {
			return nil, err
		}
	}
	keys, vals := p.keys[kmark:], p.vals[vmark:]
	m := make(map[string]any, len(keys))
	for i, k := range keys {
		m[k] = vals[i]
	}
	clear(keys)
	clear(vals)
	p.keys, p.vals = p.keys[:kmark], p.vals[:vmark]
	return m, nil
}

// checkKey records an ambiguity when keys, the keys of the object being
// parsed so far, hold k already, or a key that differs from it only in
// case. Until an ambiguity is found, keys are distinct.
func (p *parser) checkKey(keys []string, folded *map[string]string, k string) {
	if p.amb != nil {
		return // the body is refused already
	}
	if len(keys) < smallObject {
		for _, o := range keys {
			if o == k {
				p.ambiguous(&ambiguityError{p.where(), fmt.Sprintf("duplicate key %q", k)})
				return
			}
		}
		for _, o := range keys {
			if strings.EqualFold(o, k) {
				p.ambiguous(&ambiguityError{p.where(), fmt.Sprintf("keys %q and %q differ only in case", o, k)})
				return
			}
		}
		return
	}
	if *folded == nil {
		*folded = make(map[string]string, 2*len(keys))
		for _, o := range keys {
			(*folded)[jsonstrict.FoldKey(o)] = o
		}
	}
	fk := jsonstrict.FoldKey(k)
	if o, ok := (*folded)[fk]; ok {
		if o == k {
			p.ambiguous(&ambiguityError{p.where(), fmt.Sprintf("duplicate key %q", k)})
		} else {
			p.ambiguous(&ambiguityError{p.where(), fmt.Sprintf("keys %q and %q differ only in case", o, k)})
		}
		return
	}
	(*folded)[fk] = k
}

// array parses an array at p.i (which holds '[') into a boxed []any. With
// spans non-nil, it appends the raw span of every element to *spans. The
// elements are gathered on the parser's scratch stack and the slice is
// made once, at its length, when the array ends.
func (p *parser) array(spans *[]span) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return p.box.array(nil), nil
	}
	vmark := len(p.vals)
	for n := 0; ; n++ {
		p.ws()
		start := p.i
		p.path = append(p.path, pathElem{idx: n})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		if spans != nil {
			*spans = append(*spans, span{"", start, p.i})
		}
		p.vals = append(p.vals, v)
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of JSON input")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			vals := p.vals[vmark:]
			a := p.box.array(vals)
			clear(vals)
			p.vals = p.vals[:vmark]
			return a, nil
		default:
			return nil, p.fail("invalid character %q after array element", p.s[p.i])
		}
	}
}

// number parses a number with the JSON grammar into a float64.
func (p *parser) number() (any, error) {
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
	f, err := strconv.ParseFloat(s[p.i:i], 64)
	if err != nil {
		return nil, p.fail("number %s out of range", s[p.i:i])
	}
	p.i = i
	return p.box.num(f), nil
}
