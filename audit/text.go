package audit

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode"
	"unicode/utf8"
)

// TextMatcher decides Query.Text, the same way in every store: a record
// matches when the text is a substring, ignoring case, of one of its
// Reason, Event, Tool, SessionID, AgentID, PolicyID or Input.
//
//   - Case is ignored by lower-casing both sides rune by rune with
//     unicode.ToLower (Go's simple case mapping: "STRASSE" finds "strasse",
//     not "straße"); a byte that is not UTF-8 stays as it is.
//   - Input is searched as the JSON text the store holds: as received, with
//     its escapes ("é" does not find "\u00e9") and after the trace's
//     redaction (a secret replaced by [REDACTED:kind:tag] is not found by
//     its value — the point of redacting it).
//   - Output, Results, ReasonCodes, the views and the other ids are not
//     searched.
//   - A text holding a NUL byte matches nothing (no field is searched for
//     one; JSON text holds none).
//
// A TextMatcher keeps a scratch buffer: it is not safe for concurrent use.
type TextMatcher struct {
	needle []byte
	none   bool // the text holds a NUL: nothing matches
	buf    []byte
}

// NewTextMatcher returns the matcher of text; every record matches "".
func NewTextMatcher(text string) *TextMatcher {
	m := &TextMatcher{}
	m.needle = lowerAppend(nil, []byte(text))
	m.none = bytes.IndexByte(m.needle, 0) >= 0
	return m
}

// Match reports whether r matches: its fields are tried first, its Input
// last (the only large one).
func (m *TextMatcher) Match(r *Record) bool {
	return m.MatchFields(r) || m.Contains(r.Input)
}

// MatchFields reports whether one of r's small fields matches (Reason,
// Event, Tool, SessionID, AgentID, PolicyID: every field but Input). A
// store that reads Input separately tries these first.
func (m *TextMatcher) MatchFields(r *Record) bool {
	for _, s := range [...]string{r.Reason, r.Event, r.Tool, r.SessionID, r.AgentID, r.PolicyID} {
		if m.containsString(s) {
			return true
		}
	}
	return false
}

// Contains reports whether b holds the text, ignoring case.
func (m *TextMatcher) Contains(b []byte) bool {
	if m.none {
		return false
	}
	if len(m.needle) == 0 {
		return true
	}
	m.buf = lowerAppend(m.buf[:0], b)
	return bytes.Contains(m.buf, m.needle)
}

func (m *TextMatcher) containsString(s string) bool {
	if m.none {
		return false
	}
	if len(m.needle) == 0 {
		return true
	}
	m.buf = append(m.buf[:0], s...)
	m.buf = lowerInPlace(m.buf)
	return bytes.Contains(m.buf, m.needle)
}

// lowerInPlace lower-cases b; it works in place while b is ASCII (the usual
// case) and copies otherwise.
func lowerInPlace(b []byte) []byte {
	for i, c := range b {
		if c >= utf8.RuneSelf {
			return lowerAppend(b[:i:i], b[i:])
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// lowerAppend appends s lower-cased rune by rune to dst, eight ASCII bytes
// at a time where it can.
func lowerAppend(dst, s []byte) []byte {
	dst = slices.Grow(dst, len(s))
	for i := 0; i < len(s); {
		for ; i+8 <= len(s); i += 8 {
			w := binary.LittleEndian.Uint64(s[i:])
			if w&0x8080808080808080 != 0 {
				break
			}
			// Each byte b < 0x80: b+0x3f has its top bit set iff b >= 'A',
			// b+0x25 iff b > 'Z'; no sum carries into the next byte.
			upper := (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & 0x8080808080808080
			dst = binary.LittleEndian.AppendUint64(dst, w|upper>>2) // 0x80>>2 is 'a'-'A'
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, c)
		} else {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += size
	}
	return dst
}
