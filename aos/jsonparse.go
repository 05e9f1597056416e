package aos

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects, so that no input can
// exhaust the stack.
const maxDepth = 1000

// parser decodes JSON text into the generic values encoding/json produces
// (map[string]any, []any, string, float64, bool and nil) in a single pass.
// Strings without escapes are substrings of the input, not copies: the input
// must not change while the values are in use. It follows encoding/json's
// rules: invalid UTF-8 and lone surrogates become U+FFFD, and duplicate keys
// keep the last value. It is the AOS hot path: a request is parsed once,
// and the raw text of the members the endpoint needs (id, params, the
// wrapped protocol message) is recorded as byte spans instead of re-encoded.
type parser struct {
	s     string
	i     int
	depth int
}

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
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the value just parsed.
func (p *parser) end() error {
	p.ws()
	if p.i < len(p.s) {
		return p.fail("invalid character %q after top-level value", p.s[p.i])
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
		return p.str()
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

// object parses an object at p.i (which holds '{'). With spans non-nil, it
// appends the raw span of every member's value to *spans.
func (p *parser) object(spans *[]span) (map[string]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++
	m := make(map[string]any)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return m, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of JSON input")
		}
		if p.s[p.i] != '"' {
			return nil, p.fail("invalid character %q looking for an object key", p.s[p.i])
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':' after object key")
		}
		p.i++
		p.ws()
		start := p.i
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if spans != nil {
			*spans = append(*spans, span{k, start, p.i})
		}
		m[k] = v
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of JSON input")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return m, nil
		default:
			return nil, p.fail("invalid character %q after object value", p.s[p.i])
		}
	}
}

// array parses an array at p.i (which holds '['). With spans non-nil, it
// appends the raw span of every element to *spans.
func (p *parser) array(spans *[]span) ([]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++
	a := []any{}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return a, nil
	}
	for {
		p.ws()
		start := p.i
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if spans != nil {
			*spans = append(*spans, span{"", start, p.i})
		}
		a = append(a, v)
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
			return a, nil
		default:
			return nil, p.fail("invalid character %q after array element", p.s[p.i])
		}
	}
}

// str parses a string at p.i (which holds '"').
func (p *parser) str() (string, error) {
	start := p.i + 1
	for i := start; i < len(p.s); i++ {
		c := p.s[i]
		if c == '"' {
			p.i = i + 1
			return p.s[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return p.strSlow(start, i)
		}
	}
	p.i = len(p.s)
	return "", p.fail("unterminated string")
}

// strSlow finishes a string with escapes, control characters or non-ASCII
// bytes; s[start:i] is plain ASCII already scanned.
func (p *parser) strSlow(start, i int) (string, error) {
	var b []byte
	lit := start
	for i < len(p.s) {
		c := p.s[i]
		switch {
		case c == '"':
			p.i = i + 1
			if b == nil {
				return p.s[start:i], nil
			}
			return string(append(b, p.s[lit:i]...)), nil
		case c == '\\':
			b = append(b, p.s[lit:i]...)
			if i+1 >= len(p.s) {
				p.i = i
				return "", p.fail("unterminated string")
			}
			switch e := p.s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(p.s, i+2)
				if r < 0 {
					p.i = i
					return "", p.fail("invalid \\u escape in string")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+3 < len(p.s) && p.s[i+2] == '\\' && p.s[i+3] == 'u' {
						r2 = hex4(p.s, i+4)
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				p.i = i
				return "", p.fail("invalid escape \\%c in string", e)
			}
			i += 2
			lit = i
		case c < 0x20:
			p.i = i
			return "", p.fail("invalid control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, p.s[lit:i]...)
				b = append(b, "\uFFFD"...)
				lit = i + 1
			}
			i += size
		}
	}
	p.i = len(p.s)
	return "", p.fail("unterminated string")
}

// hex4 decodes the four hex digits at s[i:], or returns -1.
func hex4(s string, i int) rune {
	if i+4 > len(s) {
		return -1
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
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
	return f, nil
}
