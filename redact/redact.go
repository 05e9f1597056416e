// Package redact keeps secrets out of the trace: a Redactor replaces every
// detector match (the secrets and PII kinds of package detect) in a record's
// input, output, views and texts with "[REDACTED:<kind>:<tag>]", where tag
// is the first 8 hex digits of an HMAC-SHA256 of the matched text under a
// key kept in the data directory (key.go). An auditor sees which kind was
// attempted and can tell two attempts of the same secret apart; the trace
// does not hold the secret, and the tag cannot be reversed without the key.
package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/detect"
)

// KeySize is the size of a Redactor's key in bytes.
const KeySize = 32

// TagLen is the number of hex digits of the HMAC in a replacement.
const TagLen = 8

// kinds are the detectors whose matches are redacted: all of them.
var kinds = []string{"secrets", "pii"}

// Redactor redacts records with one HMAC key. It is safe for concurrent use.
type Redactor struct {
	macs sync.Pool // of hash.Hash, HMAC-SHA256 under the key
}

// New returns a Redactor keyed with key (KeySize random bytes in
// production; LoadKey reads or creates them).
func New(key []byte) *Redactor {
	k := append([]byte(nil), key...)
	r := &Redactor{}
	r.macs.New = func() any { return hmac.New(sha256.New, k) }
	return r
}

// Filter redacts rec in place (its fields are replaced, never the bytes or
// slices they share with the decision's outcome): Input, Output and Views
// (JSON, kept valid), Reason, and each result's Reason, Error, Refused and
// Patch. It is a warden.RecordFilter.
func (r *Redactor) Filter(rec *warden.Record) {
	rec.Input = r.JSON(rec.Input)
	rec.Output = r.JSON(rec.Output)
	rec.Views = r.JSON(rec.Views)
	rec.Reason = r.String(rec.Reason)
	copied := false
	for i := range rec.Results {
		res := rec.Results[i]
		res.Reason = r.String(res.Reason)
		res.Error = r.String(res.Error)
		res.Refused = r.String(res.Refused)
		res.Patch = r.JSON(res.Patch)
		if res.Reason == rec.Results[i].Reason && res.Error == rec.Results[i].Error &&
			res.Refused == rec.Results[i].Refused && sameBytes(res.Patch, rec.Results[i].Patch) {
			continue
		}
		if !copied { // the slice is the outcome's: copy before changing it
			rec.Results = append([]warden.Result(nil), rec.Results...)
			copied = true
		}
		rec.Results[i] = res
	}
}

var _ warden.RecordFilter = (*Redactor)(nil).Filter

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// String returns s with every detector match replaced.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	ms := detect.Find(s, kinds)
	if len(ms) == 0 {
		return s
	}
	return r.replace(s, ms)
}

// replace writes s with the sorted, non-overlapping matches ms replaced.
func (r *Redactor) replace(s string, ms []detect.Match) string {
	var b strings.Builder
	b.Grow(len(s) + len(ms)*(len(detect.RedactedPrefix)+len("credit_card")+TagLen+2))
	mac := r.macs.Get().(hash.Hash)
	defer r.macs.Put(mac)
	var sum [sha256.Size]byte
	var tag [TagLen]byte
	last := 0
	for _, m := range ms {
		if m.Start < last || m.End > len(s) || m.Start >= m.End {
			continue // never produced by detect.Find
		}
		mac.Reset()
		mac.Write([]byte(s[m.Start:m.End]))
		hex.Encode(tag[:], mac.Sum(sum[:0])[:TagLen/2])
		b.WriteString(s[last:m.Start])
		b.WriteString(detect.RedactedPrefix)
		b.WriteString(m.Kind)
		b.WriteByte(':')
		b.Write(tag[:])
		b.WriteByte(']')
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// JSON returns the JSON value b with every detector match in its strings
// (object keys included) replaced, and every number that is a match (a card
// number written as a number) replaced by a string holding the replacement;
// everything else is kept byte for byte, so the result is valid JSON when b
// is. b itself is never modified; when nothing matches, b is returned.
func (r *Redactor) JSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	src := unsafe.String(&b[0], len(b)) // read only; b is never written
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			end, escaped := stringEnd(b, i)
			if end < i+2 || b[end-1] != '"' { // unterminated: not JSON
				i = len(b)
				continue
			}
			s, ok := src[i+1:end-1], true
			if escaped {
				s, ok = unquote(b[i:end])
			}
			if !ok {
				i = end
				continue
			}
			if ms := detect.Find(s, kinds); len(ms) > 0 {
				out = append(out, b[last:i]...)
				out = appendString(out, r.replace(s, ms))
				last = end
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(b) && isNumberByte(b[end]) {
				end++
			}
			if ms := detect.Find(src[i:end], kinds); len(ms) > 0 {
				out = append(out, b[last:i]...)
				out = appendString(out, r.replace(src[i:end], ms))
				last = end
			}
			i = end
		default:
			i++
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// unquote decodes the JSON string q.
func unquote(q []byte) (string, bool) {
	var s string
	err := json.Unmarshal(q, &s)
	return s, err == nil
}

// stringEnd returns the index just past the string starting at b[i] == '"'
// and whether it holds an escape (an unterminated string ends at len(b)).
func stringEnd(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(b), escaped
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// appendString appends s as a JSON string (invalid UTF-8 as U+FFFD, as
// encoding/json does).
func appendString(out []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out = append(out, '\\', c)
			case c == '\n':
				out = append(out, '\\', 'n')
			case c == '\r':
				out = append(out, '\\', 'r')
			case c == '\t':
				out = append(out, '\\', 't')
			case c < 0x20:
				out = append(out, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			out = append(out, '\\', 'u', '2', '0', '2', hexd[r&0xf])
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return append(out, '"')
}
