package replay

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/detect"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/unseal"
)

// Originals says what the replayed records were decided on: the originals
// of their redacted values, opened with the sealing key, or the redacted
// form the trace stores in the clear.
type Originals struct {
	// Revealed counts the records decided on originals: at least one of
	// their sealed values opened and was put back (redact.Reveal).
	Revealed int `json:"revealed"`
	// Redacted counts the records decided on redacted input: their input
	// or views still held a mark [REDACTED:<kind>:<tag>] when decided —
	// without the key every record with a mark, with it those whose
	// values were erased, did not open, or were never sealed.
	Redacted int `json:"redacted"`
	// Erased counts the records of which a value's key was destroyed
	// (`warden forget`, trace.seal.retention): it stays redacted for good.
	Erased int `json:"erased"`
	// Failed counts the records of which a value did not open for another
	// reason (a DEK wrapped by another KEK, altered bytes); Error is the
	// first such error.
	Failed int    `json:"failed"`
	Error  string `json:"error,omitempty"`
	// Unavailable says why no original could be opened at all (no sealing
	// key, sealing off); "" when the replay had the key. The caller that
	// opened no key sets it (Run does not know why).
	Unavailable string `json:"unavailable,omitempty"`
}

// WithOriginals returns a Replayer like r that decides each record on the
// originals of its redacted values, opened by s (unseal.Service.Originals:
// the Guardian's own use, no unseal is recorded), so the detectors see
// what they saw live. A value that does not open (erased, another KEK)
// stays redacted and is counted (Summary.Originals). A nil s decides on
// the records as stored, as r does.
//
// The report never shows an original: a changed record's tool, event and
// recorded reason are the stored ones, and an original that the candidate
// set's reason quotes is written back as its mark.
func (r *Replayer) WithOriginals(s *unseal.Service) *Replayer {
	c := *r
	c.originals = s
	return &c
}

// opened is what reveal did to one record.
type opened struct {
	originals     redact.Originals // the values put back
	erased, fails int
	err           error
}

// reveal returns rec with the originals of its sealed values put back (a
// copy; rec itself when there are none, or no Service).
func (r *Replayer) reveal(ctx context.Context, rec *audit.Record) (*audit.Record, opened) {
	if r.originals == nil || len(rec.Sealed) == 0 {
		return rec, opened{}
	}
	o, err := r.originals.Originals(ctx, rec)
	if err != nil { // a malformed Sealed: decided as stored
		return rec, opened{fails: 1, err: err}
	}
	res := opened{originals: o.Originals, erased: o.Erased, fails: o.Failed, err: o.Err}
	if len(o.Originals) == 0 {
		return rec, res
	}
	return redact.Reveal(rec, o.Originals), res
}

// count adds what reveal did to dec (the record as decided) to s.
func (s *Originals) count(dec *audit.Record, o *opened) {
	if len(o.originals) > 0 {
		s.Revealed++
	}
	if o.erased > 0 {
		s.Erased++
	}
	if o.fails > 0 {
		s.Failed++
		if s.Error == "" && o.err != nil {
			s.Error = o.err.Error()
		}
	}
	if hasTraceMark(dec) {
		s.Redacted++
	}
}

// add merges the counts of o into s.
func (s *Originals) add(o Originals) {
	s.Revealed += o.Revealed
	s.Redacted += o.Redacted
	s.Erased += o.Erased
	s.Failed += o.Failed
	if s.Error == "" {
		s.Error = o.Error
	}
}

// hasTraceMark reports whether rec's input or views hold a mark of the
// trace's redaction.
func hasTraceMark(rec *audit.Record) bool {
	for _, b := range [][]byte{rec.Input, rec.Views} {
		if bytes.Contains(b, []byte(detect.RedactedPrefix)) && traceMark.Match(b) {
			return true
		}
	}
	return false
}

// conceal returns s with each of the originals o holds written back as its
// mark: a reason the candidate set wrote from the revealed input quotes
// no original in the report. Longer originals are replaced first, so one
// that holds another is replaced whole.
func conceal(s string, o redact.Originals) string {
	if len(o) == 0 || s == "" {
		return s
	}
	keys := make([]string, 0, len(o))
	for k, v := range o {
		if v.Text != "" && strings.Contains(s, v.Text) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return len(o[b].Text) - len(o[a].Text) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, o[k].Text, detect.RedactedPrefix+k+"]")
	}
	return s
}
