package redact

import (
	"encoding/json"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/detect"
)

// Original is a value the redaction replaced.
type Original struct {
	// Text is the value as it was in the record.
	Text string
	// Number is true when the value was a whole JSON number (a card
	// number written as a number), which the redaction wrote as a string:
	// revealing it writes the number back. (When the same value was
	// also a string of the record, it is revealed as a string.)
	Number bool
	// conflict is true when two different values of one record got the
	// same mark (an HMAC tag collision, 2^-32 per pair): neither is sealed
	// nor revealed, so a mark never reveals the wrong value.
	conflict bool
}

// Originals maps a mark's "kind:tag" (the mark [REDACTED:kind:tag] without
// its brackets and prefix) to the value it replaced in one record.
type Originals map[string]Original

// add notes that the mark kind:tag replaced text.
func (o Originals) add(kind string, tag []byte, text string, number bool) {
	k := kind + ":" + string(tag)
	if have, ok := o[k]; ok {
		if have.Text != text {
			o[k] = Original{conflict: true}
		} else if have.Number && !number {
			// The same value as a number and inside a string: it is
			// revealed as a string everywhere (one mark, one form).
			have.Number = false
			o[k] = have
		}
		return
	}
	o[k] = Original{Text: strings.Clone(text), Number: number}
}

// get returns the original of the mark key k, if it may be revealed.
func (o Originals) get(k string) (Original, bool) {
	v, ok := o[k]
	return v, ok && !v.conflict
}

// markAt parses a mark starting at s[i:] (which starts with
// detect.RedactedPrefix): it returns its key ("kind:tag") and the index
// just past it, or ok false when s[i:] is not a mark with a tag.
func markAt(s string, i int) (key string, end int, ok bool) {
	j := i + len(detect.RedactedPrefix)
	k := j
	for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9' || s[k] == '_') {
		k++
	}
	if k == j || k+1+TagLen >= len(s) || s[k] != ':' || s[k+1+TagLen] != ']' {
		return "", 0, false
	}
	for _, c := range []byte(s[k+1 : k+1+TagLen]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", 0, false
		}
	}
	return s[j : k+1+TagLen], k + 2 + TagLen, true
}

// RevealString returns s with each mark whose original o holds replaced by
// that original; other text, and marks o does not hold, are kept.
func RevealString(s string, o Originals) string {
	if len(o) == 0 || !strings.Contains(s, detect.RedactedPrefix) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; ; {
		n := strings.Index(s[i:], detect.RedactedPrefix)
		if n < 0 {
			break
		}
		i += n
		key, end, ok := markAt(s, i)
		if !ok {
			i += len(detect.RedactedPrefix)
			continue
		}
		if v, ok := o.get(key); ok {
			b.WriteString(s[last:i])
			b.WriteString(v.Text)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// RevealJSON returns the JSON value b with the marks in its strings (object
// keys included) revealed as RevealString does; a string that is exactly
// the mark of a number (Original.Number) becomes that number again. b
// itself is never modified; when nothing is revealed, b is returned.
func RevealJSON(b json.RawMessage, o Originals) json.RawMessage {
	if len(o) == 0 || !strings.Contains(string(b), detect.RedactedPrefix) {
		return b
	}
	var out []byte
	last := 0
	walk(b, func(start, end int, s string) {
		if b[start] != '"' || !strings.Contains(s, detect.RedactedPrefix) {
			return
		}
		if key, e, ok := markAt(s, 0); ok && e == len(s) {
			if v, ok := o.get(key); ok && v.Number && json.Valid([]byte(v.Text)) {
				out = append(append(out, b[last:start]...), v.Text...)
				last = end
				return
			}
		}
		r := RevealString(s, o)
		if r == s {
			return
		}
		out = appendString(append(out, b[last:start]...), r)
		last = end
	}, nil)
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// Reveal returns a copy of rec with the marks of every field Filter
// redacts revealed from o (rec is not changed; the copy shares what
// nothing revealed). It is the record as it was decided, for those who
// may see originals.
func Reveal(rec *audit.Record, o Originals) *audit.Record {
	c := *rec
	if len(o) == 0 {
		return &c
	}
	c.Input = RevealJSON(c.Input, o)
	c.Output = RevealJSON(c.Output, o)
	c.Views = RevealJSON(c.Views, o)
	c.Reason = RevealString(c.Reason, o)
	c.Event = RevealString(c.Event, o)
	c.Tool = RevealString(c.Tool, o)
	if len(c.ReasonCodes) > 0 {
		codes := make([]string, len(c.ReasonCodes))
		for i, code := range c.ReasonCodes {
			codes[i] = RevealString(code, o)
		}
		c.ReasonCodes = codes
	}
	if len(c.Results) > 0 {
		rs := make([]warden.Result, len(c.Results))
		for i, r := range c.Results {
			r.Reason = RevealString(r.Reason, o)
			r.Error = RevealString(r.Error, o)
			r.Refused = RevealString(r.Refused, o)
			r.Patch = RevealJSON(r.Patch, o)
			rs[i] = r
		}
		c.Results = rs
	}
	return &c
}
