package server

import (
	"bytes"
	"encoding/json"

	"github.com/wardenhq/warden/audit"
)

// recordPage encodes records into a JSON array as the store streams them
// (its add is a Scan callback), so a response holds at most one page in
// memory, whatever the records weigh. /api/hooks/runs and /api/runs both
// page with it.
//
// The page stops — add returns false — before the record that would make
// it more than max records or more than maxBytes bytes (counting the
// prefix and the reserve, the bytes the caller writes after the array); a
// record larger than maxBytes on its own is sent alone.
type recordPage struct {
	buf      bytes.Buffer
	enc      *json.Encoder
	max      int
	maxBytes int64
	reserve  int

	n      int    // records in the page
	lastID string // the last record in the page
	// full says why the page stopped while more records matched: "last"
	// (max records given, and another matched) or "bytes"; "" when the
	// scan ended on its own.
	full string
	err  error // an encoding error; add then returns false
}

// newRecordPage starts a page with prefix, ending in the array's "[".
func newRecordPage(prefix string, max int, maxBytes int64, reserve int) *recordPage {
	p := &recordPage{max: max, maxBytes: maxBytes, reserve: reserve}
	p.enc = json.NewEncoder(&p.buf)
	p.buf.WriteString(prefix)
	return p
}

// add appends rec, or reports false when the page is full.
func (p *recordPage) add(rec *audit.Record) bool {
	if p.n == p.max {
		p.full = "last"
		return false
	}
	mark := p.buf.Len()
	if p.n > 0 {
		p.buf.WriteByte(',')
	}
	if p.err = p.enc.Encode(rec); p.err != nil {
		return false
	}
	p.buf.Truncate(p.buf.Len() - 1) // Encode's newline
	if p.n > 0 && int64(p.buf.Len()+p.reserve) > p.maxBytes {
		p.buf.Truncate(mark)
		p.full = "bytes"
		return false
	}
	p.n++
	p.lastID = rec.ID
	return true
}
