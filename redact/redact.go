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
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/wardenhq/warden/audit"

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
// (JSON, kept valid), Reason, Event, Tool, ReasonCodes, and each result's
// Reason, Error, Refused and Patch. The ids (ID, RequestID, AgentID,
// SessionID, TurnID, StepID, ApprovalID), the principal (Caller, Tenant)
// and what the configuration names (PolicyID, PolicyVersion, a result's
// Guardian, PolicyID, Kind, Labels) are kept: they join the trace to the
// rest of the store and are not the step's content (docs/security.md). It
// is what RecordFilter runs.
func (r *Redactor) Filter(rec *audit.Record) {
	if mayMatch(rec) {
		r.rewrite(rec, nil)
	}
}

// FilterOriginals is Filter that also returns what it replaced: each
// mark's original (Originals), to be sealed beside the record (Seal). It
// returns nil when nothing was replaced.
func (r *Redactor) FilterOriginals(rec *audit.Record) Originals {
	if !mayMatch(rec) {
		return nil
	}
	o := Originals{}
	r.rewrite(rec, o)
	if len(o) == 0 {
		return nil
	}
	return o
}

// rewrite redacts rec (which mayMatch), adding what it replaced to o.
func (r *Redactor) rewrite(rec *audit.Record, o Originals) {
	rec.Input = r.json(rec.Input, o)
	rec.Output = r.json(rec.Output, o)
	rec.Views = r.json(rec.Views, o)
	rec.Reason = r.str(rec.Reason, o)
	rec.Event = r.str(rec.Event, o)
	rec.Tool = r.str(rec.Tool, o)
	for i, code := range rec.ReasonCodes {
		if c := r.str(code, o); c != code {
			codes := append([]string(nil), rec.ReasonCodes...) // the outcome's: copy
			codes[i] = c
			for j := i + 1; j < len(codes); j++ {
				codes[j] = r.str(codes[j], o)
			}
			rec.ReasonCodes = codes
			break
		}
	}
	copied := false
	for i := range rec.Results {
		res := rec.Results[i]
		res.Reason = r.str(res.Reason, o)
		res.Error = r.str(res.Error, o)
		res.Refused = r.str(res.Refused, o)
		res.Patch = r.json(res.Patch, o)
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

// sep joins a record's texts for mayMatch: a byte no detector reads as
// part of a match or as a separator inside one (TestSeparator).
const sep = "\x00"

var bufs = sync.Pool{New: func() any { return new([]byte) }}

// mayMatch reports whether any text of rec holds a detector match, or its
// JSON a secret by its key (detect.Field): it runs the detectors once over
// all of them, joined by sep, rather than once per string (most records
// hold none, and most strings are short). A match in one text is a match
// in the joined texts, so false means Filter has nothing to do.
func mayMatch(rec *audit.Record) bool {
	bp := bufs.Get().(*[]byte)
	buf := (*bp)[:0]
	add := func(_, _ int, s string) {
		buf = append(buf, s...)
		buf = append(buf, sep...)
	}
	field := false
	fields := func(_, _ int, key, value string) {
		if !field {
			_, field = detect.Field(key, value)
		}
	}
	walk(rec.Input, add, fields)
	walk(rec.Output, add, fields)
	walk(rec.Views, add, fields)
	add(0, 0, rec.Reason)
	add(0, 0, rec.Event)
	add(0, 0, rec.Tool)
	for _, code := range rec.ReasonCodes {
		add(0, 0, code)
	}
	for i := range rec.Results {
		res := &rec.Results[i]
		add(0, 0, res.Reason)
		add(0, 0, res.Error)
		add(0, 0, res.Refused)
		walk(res.Patch, add, fields)
	}
	found := field || len(buf) > 0 && len(detect.Find(unsafe.String(&buf[0], len(buf)), kinds)) > 0
	if cap(buf) <= 1<<20 {
		*bp = buf
		bufs.Put(bp)
	}
	return found
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// String returns s with every detector match replaced.
func (r *Redactor) String(s string) string { return r.str(s, nil) }

// StringOriginals is String that also adds what it replaced to o (when
// o is not nil).
func (r *Redactor) StringOriginals(s string, o Originals) string { return r.str(s, o) }

func (r *Redactor) str(s string, o Originals) string {
	if s == "" {
		return s
	}
	ms := detect.Find(s, kinds)
	if len(ms) == 0 {
		return s
	}
	return r.replace(s, ms, o, false)
}

// maxRounds bounds the re-scans of a redacted text (as detect.Redact does).
const maxRounds = 4

// span is a replacement's place in a text.
type span struct{ start, end int }

// replace returns s with the sorted, non-overlapping matches ms replaced,
// then re-scans the result: a removal can expose a new candidate (digits
// whose neighbour was a match), which is replaced too; what the earlier
// rounds wrote is masked from the scan, but nothing else is, so a text
// that only looks like a replacement is scanned like any other.
//
// Each replacement's original is added to o (when not nil); number says
// that s is a JSON number token (JSON replaced it by a string).
func (r *Redactor) replace(s string, ms []detect.Match, o Originals, number bool) string {
	out, tags := r.apply(s, ms, nil, o, number)
	for round := 1; round < maxRounds; round++ {
		masked := []byte(out)
		for _, t := range tags {
			clear(masked[t.start:t.end])
		}
		ms = detect.Find(string(masked), kinds)
		ms = slices.DeleteFunc(ms, func(m detect.Match) bool {
			i, _ := slices.BinarySearchFunc(tags, m.Start, func(t span, x int) int { return t.end - 1 - x })
			return i < len(tags) && tags[i].start < m.End
		})
		if len(ms) == 0 {
			break
		}
		out, tags = r.apply(out, ms, tags, o, false)
	}
	return out
}

// apply writes s with ms replaced; tags are the replacements already in s
// (disjoint from ms); it returns the text and all its replacements, sorted.
func (r *Redactor) apply(s string, ms []detect.Match, tags []span, o Originals, number bool) (string, []span) {
	var b strings.Builder
	b.Grow(len(s) + len(ms)*(len(detect.RedactedPrefix)+len("credit_card")+TagLen+2))
	mac := r.macs.Get().(hash.Hash)
	defer r.macs.Put(mac)
	var sum [sha256.Size]byte
	var tag [TagLen]byte
	out := make([]span, 0, len(tags)+len(ms))
	last, ti := 0, 0
	for _, m := range ms {
		if m.Start < last || m.End > len(s) || m.Start >= m.End {
			continue // never produced by detect.Find
		}
		for ; ti < len(tags) && tags[ti].start < m.Start; ti++ {
			d := b.Len() + tags[ti].start - last // its place in the output
			out = append(out, span{d, d + tags[ti].end - tags[ti].start})
		}
		mac.Reset()
		mac.Write([]byte(s[m.Start:m.End]))
		hex.Encode(tag[:], mac.Sum(sum[:0])[:TagLen/2])
		b.WriteString(s[last:m.Start])
		start := b.Len()
		b.WriteString(detect.RedactedPrefix)
		b.WriteString(m.Kind)
		b.WriteByte(':')
		b.Write(tag[:])
		b.WriteByte(']')
		out = append(out, span{start, b.Len()})
		if o != nil {
			o.add(m.Kind, tag[:], s[m.Start:m.End], number && m.Start == 0 && m.End == len(s))
		}
		last = m.End
	}
	for ; ti < len(tags); ti++ {
		d := b.Len() + tags[ti].start - last
		out = append(out, span{d, d + tags[ti].end - tags[ti].start})
	}
	b.WriteString(s[last:])
	return b.String(), out
}

// JSON returns the JSON value b with every detector match in its strings
// (object keys included) replaced, and every number that is a match (a card
// number written as a number) replaced by a string holding the replacement;
// everything else is kept byte for byte, so the result is valid JSON when b
// is. b itself is never modified; when nothing matches, b is returned.
func (r *Redactor) JSON(b json.RawMessage) json.RawMessage { return r.json(b, nil) }

// JSONOriginals is JSON that also adds what it replaced to o (when o is
// not nil).
func (r *Redactor) JSONOriginals(b json.RawMessage, o Originals) json.RawMessage { return r.json(b, o) }

func (r *Redactor) json(b json.RawMessage, o Originals) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	// One detector pass over the value's texts joined by sep finds where
	// the matches are (a match in one text is a match in the joined texts,
	// overlapping that text: TestSeparator); only the texts a match
	// overlaps are then redacted one by one.
	// A string that is a secret by its key (detect.Field: {"api_key":
	// "…"}, an AOS input named password) is a match too.
	j := joins.Get().(*joined)
	defer j.put()
	walk(b, func(start, end int, s string) {
		j.pieces = append(j.pieces, piece{start, end, len(j.buf), len(j.buf) + len(s)})
		j.buf = append(j.buf, s...)
		j.buf = append(j.buf, sep...)
	}, func(start, _ int, key, value string) {
		if m, ok := detect.Field(key, value); ok {
			j.fields = append(j.fields, fieldMatch{start, m})
		}
	})
	if len(j.buf) == 0 {
		return b
	}
	text := unsafe.String(&j.buf[0], len(j.buf))
	ms := detect.Find(text, kinds)
	if len(ms) == 0 && len(j.fields) == 0 {
		return b
	}
	// A pair's value is found when its object closes: sort by token.
	slices.SortStableFunc(j.fields, func(a, b fieldMatch) int { return a.start - b.start })
	var out []byte
	last, mi, fi := 0, 0, 0
	for _, p := range j.pieces {
		for mi < len(ms) && ms[mi].End <= p.bs {
			mi++
		}
		for fi < len(j.fields) && j.fields[fi].start < p.start {
			fi++
		}
		field := fi < len(j.fields) && j.fields[fi].start == p.start
		if mi == len(ms) && fi == len(j.fields) {
			break
		}
		if !field && (mi == len(ms) || ms[mi].Start >= p.be) {
			continue
		}
		s := text[p.bs:p.be]
		pms := detect.Find(s, kinds)
		if field {
			pms = withField(pms, j.fields[fi].m)
		}
		if len(pms) > 0 {
			out = append(out, b[last:p.start]...)
			out = appendString(out, r.replace(s, pms, o, b[p.start] != '"'))
			last = p.end
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// piece is one text of a JSON value: its token's bounds in the value and
// its bounds in the joined texts.
type piece struct{ start, end, bs, be int }

// fieldMatch is a string of a JSON value that is a secret by its key: its
// token's start in the value and the match in the string.
type fieldMatch struct {
	start int
	m     detect.Match
}

// withField adds the field match f to the sorted, non-overlapping matches
// ms of the same string, unless one of them overlaps it.
func withField(ms []detect.Match, f detect.Match) []detect.Match {
	i := 0
	for ; i < len(ms) && ms[i].End <= f.Start; i++ {
	}
	if i < len(ms) && ms[i].Start < f.End {
		return ms
	}
	return slices.Insert(ms, i, f)
}

// joined holds the joined texts of one JSON value (pooled).
type joined struct {
	buf    []byte
	pieces []piece
	fields []fieldMatch
}

var joins = sync.Pool{New: func() any { return new(joined) }}

func (j *joined) put() {
	if cap(j.buf) > 1<<20 || cap(j.pieces) > 1<<14 {
		return
	}
	j.buf, j.pieces, j.fields = j.buf[:0], j.pieces[:0], j.fields[:0]
	joins.Put(j)
}

// walk calls fn with each string (decoded; object keys included) and each
// number of the JSON text b, and the bounds of its token in b. When field
// is not nil, walk also calls it with each string stored under a key: an
// object member's value (key: the member's name) and the "value" member of
// a name/value pair (key: the pair's "name" member, or else its "key"
// member; detect.PairKey), with the value's token bounds. A string shares
// b's memory when it holds no escape: fn and field must not keep it.
func walk(b []byte, fn func(start, end int, s string), field func(start, end int, key, value string)) {
	if len(b) == 0 {
		return
	}
	src := unsafe.String(&b[0], len(b)) // read only; b is never written
	// The open containers (field only): an object's pair members so far.
	var st [16]frame
	stack := st[:0]
	key, keyed := "", false // the member name whose value comes next
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			end, escaped := stringEnd(b, i)
			if end < i+2 || b[end-1] != '"' { // unterminated: not JSON
				return
			}
			s, ok := src[i+1:end-1], true
			if escaped {
				s, ok = unquote(b[i:end])
			}
			if ok {
				fn(i, end, s)
			}
			if field != nil {
				j := end
				for j < len(b) && isSpace(b[j]) {
					j++
				}
				if j < len(b) && b[j] == ':' { // a member's name
					key, keyed = s, ok
					i = j + 1
					continue
				}
				if keyed && ok {
					field(i, end, key, s)
					if n := len(stack); n > 0 && stack[n-1].obj {
						stack[n-1].member(key, s, i, end)
					}
				}
				keyed = false
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(b) && isNumberByte(b[end]) {
				end++
			}
			fn(i, end, src[i:end])
			i, keyed = end, false
		case field == nil:
			i++
		case c == '{' || c == '[':
			stack = append(stack, frame{obj: c == '{'})
			i, keyed = i+1, false
		case c == '}' || c == ']':
			if n := len(stack); n > 0 {
				if f := &stack[n-1]; f.rank > 0 && f.ve > 0 {
					field(f.vs, f.ve, f.name, f.value)
				}
				stack = stack[:n-1]
			}
			i, keyed = i+1, false
		default:
			if !isSpace(c) {
				keyed = false // a literal or ','
			}
			i++
		}
	}
}

// frame is an open JSON container of walk: for an object, its "name" (or
// "key") and "value" string members so far.
type frame struct {
	obj    bool
	rank   uint8 // of name: 0 none, 1 from "key", 2 from "name"
	name   string
	vs, ve int // the "value" string's token; ve 0: none
	value  string
}

// member notes the string member k: v of an object (token [start, end)).
func (f *frame) member(k, v string, start, end int) {
	switch k {
	case "name":
		f.rank, f.name = 2, v
	case "key":
		if f.rank < 2 {
			f.rank, f.name = 1, v
		}
	case "value":
		f.vs, f.ve, f.value = start, end, v
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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
