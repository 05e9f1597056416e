package jsonstrict

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// String decoding follows encoding/json: the escapes of RFC 8259, surrogate
// pairs joined, a lone surrogate or an invalid UTF-8 byte replaced by U+FFFD.
// A string with none of these is returned as a substring of the input. The
// replaced ones make the text ambiguous (other readers keep the bytes, or
// fail): they are recorded (badString), and the text is refused naming the
// string — nothing is decided on the replacement text. Check decodes keys
// only: a value's decoded text is not built.

// str parses a string at p.i (which holds '"'). Plain ASCII is skipped
// eight bytes at a time.
func (p *Parser) str() (string, error) {
	s := p.s
	start := p.i + 1
	i := start
	for i+8 <= len(s) && !special8(load8(s, i)) {
		i += 8
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			p.i = i + 1
			return s[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return p.strSlow(start, i)
		}
	}
	p.i = len(s)
	return "", p.fail("unterminated string")
}

// Eight bytes at a time: lsb has the low bit of each byte set, msb the high
// bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load8 returns the eight bytes s[i:i+8] as a little-endian word.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special8 reports whether a byte of x ends a plain run of a string: '"',
// '\\', a control character (< 0x20) or a non-ASCII byte (>= 0x80). The
// tests for a zero byte ((v-lsb) &^ v & msb) and for a byte below 0x20 may
// also flag a byte after one that matches, never miss one: a true result
// only sends the caller to its byte-by-byte loop.
func special8(x uint64) bool {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((q-lsb)&^q|(b-lsb)&^b|(x-lsb*0x20)&^x|x)&msb != 0
}

// strSlow finishes a string with escapes, control characters or non-ASCII
// bytes; s[start:i] is plain ASCII already scanned.
func (p *Parser) strSlow(start, i int) (string, error) {
	var b []byte
	build := !p.check || p.inKey
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
			if i+1 >= len(p.s) {
				p.i = i
				return "", p.fail("unterminated string")
			}
			bs, r := i, rune(p.s[i+1])
			switch r {
			case '"', '\\', '/':
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				if r = hex4(p.s, i+2); r < 0 {
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
						p.loneSurrogate(bs)
						r = utf8.RuneError
					}
				}
			default:
				p.i = i
				return "", p.fail("invalid escape \\%c in string", r)
			}
			if build {
				b = utf8.AppendRune(append(b, p.s[lit:bs]...), r)
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
				p.invalidUTF8(c, i)
				if build {
					b = append(append(b, p.s[lit:i]...), "\uFFFD"...)
				}
				lit = i + 1
			}
			i += size
		}
	}
	p.i = len(p.s)
	return "", p.fail("unterminated string")
}

// invalidUTF8 records the invalid byte c at offset off of the string being
// parsed.
func (p *Parser) invalidUTF8(c byte, off int) {
	p.badUTF8 = true
	if p.amb == nil {
		p.amb = &Error{Path: p.where(), Msg: fmt.Sprintf("%s with invalid UTF-8 (byte 0x%02x at offset %d)", p.strKind(), c, off)}
	}
}

// loneSurrogate records the lone surrogate escape at offset off (its
// backslash) of the string being parsed.
func (p *Parser) loneSurrogate(off int) {
	if p.surrogate == 0 {
		p.surrogate = off + 1
	}
	if p.amb == nil {
		p.amb = &Error{Path: p.where(), Msg: fmt.Sprintf("%s with a lone surrogate escape %s (offset %d)", p.strKind(), p.s[off:off+6], off)}
	}
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

// strKind names the string being parsed in an error: a key of the object
// at the current path, or the string at it.
func (p *Parser) strKind() string {
	if p.inKey {
		return "a key"
	}
	return "a string"
}
