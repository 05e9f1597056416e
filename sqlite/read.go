package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracesql"
)

// Scan reads the store in chunks of rows, each with one short query on a
// read-only connection: the query reads only the small columns, keyset-paged
// on the rowid (insertion order: SQLite's write lock serializes every writer,
// also across processes, and a reader sees a prefix of the commits, so a
// rowid cursor never skips or repeats a row). The rows are closed before fn
// runs, so no read transaction stays open while the caller works — a slow
// consumer neither pins the WAL nor holds a connection — and each record's
// blob is read from trace.blobs just before fn gets it. Memory is one chunk
// of small rows, whatever the scan's length.
const (
	firstChunk = 100  // rows in the first query: most scans want a page (the runs API: 100)
	maxChunk   = 1000 // rows in later queries
)

const scanSQL = `SELECT rowid, id, time, event, surface, direction, request_id,
	agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
	policy_id, policy_version, latency_us, blob_off, results_len, input_len,
	output_len, policy_revision, views_len, caller, tenant, approval_id, tool,
	prev_hash, hash, sealed FROM runs`

// row is one scanned row, its blob not yet read.
type row struct {
	rowid                          int64
	rec                            audit.Record
	us, off, nRes, nIn, nOut, nVws int64
	codes                          []byte
	prevHash, hash                 []byte
	sealed                         []byte // nil when NULL: no allocation for a record without
	fields                         []byte // a text chunk's small fields, NUL-joined
}

// Scan calls fn with each record matching q, in insertion order, newest
// first unless q.Oldest, until fn returns false, the records end or ctx is
// done (then it returns ctx.Err()). See audit.Query for the cursor and the
// budget. Each record is new: fn may keep it.
//
// The column filters are the chunk query's WHERE clause, so the rows Scan
// reads all match them; q.Text is tested in Go (see scanText).
func (s *Store) Scan(ctx context.Context, q audit.Query, fn func(*audit.Record) bool) error {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.caughtUp(ctx); err != nil { // a trace log's newest records
		return err
	}
	sc := scan{s: s, q: q, start: start}
	if q.After != "" {
		// With a duplicate id (possible only in a trace from before schema
		// 2) the later record is the cursor.
		err := s.rdb.QueryRowContext(ctx, `SELECT rowid FROM runs WHERE id = ? ORDER BY rowid DESC LIMIT 1`, q.After).Scan(&sc.cursor)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return s.readErr(ctx, "find cursor", err)
		}
		sc.haveCursor = true
	}
	sc.where, sc.args = filters(q)
	if q.Text != "" {
		return sc.text(ctx, fn)
	}
	var buf []row
	for chunk := firstChunk; ; chunk = min(chunk*4, maxChunk) {
		var err error
		buf, err = s.readChunk(ctx, sc.chunkSQL(scanSQL, chunk), sc.chunkArgs(chunk), buf[:0])
		if err != nil {
			return err
		}
		for i := range buf {
			if err := ctx.Err(); err != nil {
				return err
			}
			w := &buf[i]
			r, err := s.load(ctx, w)
			if err != nil {
				return err
			}
			if r == nil {
				continue // pruned since its row was read (prune.go)
			}
			if !fn(r) {
				return nil
			}
		}
		if len(buf) < chunk {
			return ctx.Err()
		}
		// The rows are in hand: the budget can only save the next query.
		sc.scanned += len(buf) - 1
		if err := sc.spent(&buf[len(buf)-1], false); err != nil {
			return err
		}
		sc.cursor, sc.haveCursor = buf[len(buf)-1].rowid, true
	}
}

// scan is one Scan's state: its query, where it is, what it has examined.
type scan struct {
	s          *Store
	q          audit.Query
	where      string
	args       []any
	cursor     int64 // the last rowid read, when haveCursor
	haveCursor bool
	start      time.Time
	scanned    int
}

// chunkSQL is the query of the next chunk of at most n rows of cols.
func (sc *scan) chunkSQL(cols string, n int) string {
	stmt := cols + sc.where
	order, cmp := " ORDER BY rowid DESC LIMIT ?", "rowid < ?"
	if sc.q.Oldest {
		order, cmp = " ORDER BY rowid ASC LIMIT ?", "rowid > ?"
	}
	if sc.haveCursor {
		stmt += tracesql.And(sc.where) + cmp
	}
	return stmt + order
}

func (sc *scan) chunkArgs(n int) []any {
	a := sc.args[:len(sc.args):len(sc.args)]
	if sc.haveCursor {
		a = append(a, sc.cursor)
	}
	return append(a, n)
}

// spent counts the row w as examined and returns a *audit.ScanStopped
// after it once the query's budget has passed, unless w is the last row
// (last). Without Text the rows a chunk query returns all match and are in
// hand: only the query of the next chunk can be saved, so the budget is
// looked at between chunks; with Text, after every row.
func (sc *scan) spent(w *row, last bool) error {
	sc.scanned++
	if sc.q.Budget <= 0 || last || time.Since(sc.start) < sc.q.Budget {
		return nil
	}
	return &audit.ScanStopped{After: w.rec.ID, Scanned: sc.scanned}
}

// load completes w's record with its blob; nil (and no error) when the row
// has been pruned since it was read.
func (s *Store) load(ctx context.Context, w *row) (*audit.Record, error) {
	blob, err := s.rblobs.read(w.off, w.nRes+w.nIn+w.nOut+w.nVws)
	var r *audit.Record
	if err == nil {
		r, err = record(w, blob)
	}
	if err != nil {
		if s.pruned(ctx, w.rowid) {
			return nil, nil
		}
		return nil, fmt.Errorf("sqlite: run %s: %w", w.rec.ID, err)
	}
	return r, nil
}

// textSQL reads what Query.Text searches, and where the input is: a row
// that matches is then read whole (its rowid). The small fields come as one
// column, joined with NUL: a text without NUL matches the joined string
// exactly when it matches one of them, and one column costs SQLite and
// database/sql a sixth of six.
const textSQL = `SELECT rowid, id, blob_off, results_len, input_len,
	reason || char(0) || event || char(0) || tool || char(0) || session_id
	|| char(0) || agent_id || char(0) || policy_id FROM runs`

// textChunk is the rows of one text chunk: matches are sparse, so the
// chunks are large from the start.
const textChunk = 1000

// text is Scan with q.Text: each chunk reads only the searched columns of
// the rows the column filters keep, tests their small fields and then
// their input, read from trace.blobs a span of rows at a time (blobs.go:
// rows in rowid order have their blobs nearly back to back), and reads a
// matching row whole. Measured on 1,000,000 records (docs/BENCHMARKS.md),
// the text test is cheap; the cost per row is SQLite's and the blob bytes.
func (sc *scan) text(ctx context.Context, fn func(*audit.Record) bool) error {
	s := sc.s
	if strings.IndexByte(sc.q.Text, 0) >= 0 {
		return nil // matches nothing (audit.TextMatcher)
	}
	m := audit.NewTextMatcher(sc.q.Text)
	var (
		buf   []row
		spans spanReader
		one   []row
	)
	spans.f = s.rblobs
	for {
		var err error
		buf, err = s.readTextChunk(ctx, sc.chunkSQL(textSQL, textChunk), sc.chunkArgs(textChunk), buf[:0])
		if err != nil {
			return err
		}
		for i := range buf {
			if err := ctx.Err(); err != nil {
				return err
			}
			w := &buf[i]
			match := m.Contains(w.fields) // the joined small fields
			if !match && w.nIn > 0 {
				in, err := spans.input(buf, i)
				if err != nil {
					if s.pruned(ctx, w.rowid) {
						continue
					}
					return fmt.Errorf("sqlite: run %s: %w", w.rec.ID, err)
				}
				match = m.Contains(in)
			}
			if match {
				one, err = s.readChunk(ctx, scanSQL+` WHERE rowid = ?`, []any{w.rowid}, one[:0])
				if err != nil {
					return err
				}
				var r *audit.Record
				if len(one) == 1 {
					if r, err = s.load(ctx, &one[0]); err != nil {
						return err
					}
				}
				if r == nil {
					continue // pruned since its row was read
				}
				if !fn(r) {
					return nil
				}
			}
			if err := sc.spent(w, i == len(buf)-1 && len(buf) < textChunk); err != nil {
				return err
			}
		}
		if len(buf) < textChunk {
			return ctx.Err()
		}
		sc.cursor, sc.haveCursor = buf[len(buf)-1].rowid, true
	}
}

// readTextChunk runs one text chunk's query (textSQL) and appends its rows
// to buf.
func (s *Store) readTextChunk(ctx context.Context, query string, args []any, buf []row) ([]row, error) {
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.readErr(ctx, "query runs", err)
	}
	defer rows.Close()
	for rows.Next() {
		buf = append(buf, row{})
		w := &buf[len(buf)-1]
		r := &w.rec
		if err := rows.Scan(&w.rowid, &r.ID, &w.off, &w.nRes, &w.nIn, &w.fields); err != nil {
			return nil, s.readErr(ctx, "read run", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "read runs", err)
	}
	return buf, nil
}

// maxSpan bounds one read of spanReader (and the buffer it keeps).
const maxSpan = 4 << 20

// spanReader reads the inputs of a chunk's rows from trace.blobs, many
// rows with one read: the span from a row's input to as many of the next
// rows' inputs as fit in maxSpan bytes.
type spanReader struct {
	f   *blobFile
	buf []byte
	off int64 // trace.blobs offset of buf[0]
}

// input returns the input of rows[i], valid until the next call.
func (sr *spanReader) input(rows []row, i int) ([]byte, error) {
	lo, hi := inputSpan(&rows[i])
	if lo >= sr.off && hi <= sr.off+int64(len(sr.buf)) {
		return sr.buf[lo-sr.off : hi-sr.off], nil
	}
	slo, shi := lo, hi
	for j := i + 1; j < len(rows); j++ {
		l, h := inputSpan(&rows[j])
		if l == h {
			continue
		}
		nl, nh := min(slo, l), max(shi, h)
		if nh-nl > maxSpan {
			break
		}
		slo, shi = nl, nh
	}
	n := int(shi - slo)
	if cap(sr.buf) < n || cap(sr.buf) > 2*maxSpan {
		sr.buf = make([]byte, n)
	}
	sr.buf = sr.buf[:n]
	if err := sr.f.readAt(sr.buf, slo); err != nil {
		sr.buf, sr.off = sr.buf[:0], 0
		return nil, err
	}
	sr.off = slo
	return sr.buf[lo-slo : hi-slo], nil
}

// inputSpan is where w's input is in trace.blobs: [lo, hi).
func inputSpan(w *row) (lo, hi int64) {
	lo = w.off + w.nRes
	return lo, lo + w.nIn
}

// filters returns q's WHERE clause (empty, or starting with " WHERE ") and
// its arguments.
func filters(q audit.Query) (string, []any) {
	return tracesql.Where(q, func(int) string { return "?" })
}

// readChunk runs one chunk's query and appends its rows to buf.
func (s *Store) readChunk(ctx context.Context, query string, args []any, buf []row) ([]row, error) {
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.readErr(ctx, "query runs", err)
	}
	defer rows.Close()
	for rows.Next() {
		buf = append(buf, row{})
		w := &buf[len(buf)-1]
		r := &w.rec
		if err := rows.Scan(&w.rowid, &r.ID, &w.us, &r.Event, &r.Surface, &r.Direction,
			&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
			&r.Decision, &r.Reason, &w.codes, &r.PolicyID, &r.PolicyVersion,
			&r.LatencyUS, &w.off, &w.nRes, &w.nIn, &w.nOut, &r.PolicyRevision, &w.nVws,
			&r.Caller, &r.Tenant, &r.ApprovalID, &r.Tool, &w.prevHash, &w.hash, &w.sealed); err != nil {
			return nil, s.readErr(ctx, "read run", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "read runs", err)
	}
	return buf, nil
}

// readErr is ctx's error if ctx is done, else err with context.
func (s *Store) readErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// pruned reports whether the row rowid is gone (pruned after it was read).
func (s *Store) pruned(ctx context.Context, rowid int64) bool {
	var one int
	err := s.rdb.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE rowid = ?`, rowid).Scan(&one)
	return errors.Is(err, sql.ErrNoRows)
}

// record completes w's record with its blob (results, input, output and
// views back to back, as read from trace.blobs).
func record(w *row, blob []byte) (*audit.Record, error) {
	r := new(audit.Record)
	*r = w.rec
	results, rest := blob[:w.nRes], blob[w.nRes:]
	if w.nIn > 0 {
		r.Input = json.RawMessage(rest[:w.nIn:w.nIn])
	}
	rest = rest[w.nIn:]
	if w.nOut > 0 {
		r.Output = json.RawMessage(rest[:w.nOut:w.nOut])
	}
	if w.nVws > 0 {
		r.Views = json.RawMessage(rest[w.nOut:])
	}
	if len(w.sealed) > 0 {
		r.Sealed = json.RawMessage(w.sealed) // its own copy (database/sql's)
	}
	r.Time = time.UnixMicro(w.us).UTC()
	r.PrevHash, r.Hash = hex.EncodeToString(w.prevHash), hex.EncodeToString(w.hash)
	if len(w.codes) > 0 {
		if err := json.Unmarshal(w.codes, &r.ReasonCodes); err != nil {
			return nil, fmt.Errorf("reason codes: %w", err)
		}
	}
	r.Results = []warden.Result{}
	if len(results) > 0 {
		if err := json.Unmarshal(results, &r.Results); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		if r.Results == nil { // stored "null"
			r.Results = []warden.Result{}
		}
	}
	return r, nil
}
