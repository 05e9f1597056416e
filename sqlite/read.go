package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden"
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
	output_len, policy_revision, views_len, caller, tenant, approval_id FROM runs`

// row is one scanned row, its blob not yet read.
type row struct {
	rowid                          int64
	rec                            warden.Record
	us, off, nRes, nIn, nOut, nVws int64
	codes                          []byte
}

// Scan calls fn with each record matching q, in insertion order, newest
// first unless q.Oldest, until fn returns false, the records end or ctx is
// done (then it returns ctx.Err()). See warden.Query for the cursor. Each
// record is new: fn may keep it.
func (s *Store) Scan(ctx context.Context, q warden.Query, fn func(*warden.Record) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var cursor int64
	haveCursor := false
	if q.After != "" {
		// With a duplicate id (possible only in a trace from before schema
		// 2) the later record is the cursor.
		err := s.rdb.QueryRowContext(ctx, `SELECT rowid FROM runs WHERE id = ? ORDER BY rowid DESC LIMIT 1`, q.After).Scan(&cursor)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: %w: %q", warden.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return s.readErr(ctx, "find cursor", err)
		}
		haveCursor = true
	}
	where, args := filters(q)
	order, cmp := " ORDER BY rowid DESC LIMIT ?", "rowid < ?"
	if q.Oldest {
		order, cmp = " ORDER BY rowid ASC LIMIT ?", "rowid > ?"
	}
	var buf []row
	for chunk := firstChunk; ; chunk = min(chunk*4, maxChunk) {
		stmt, a := scanSQL+where, args
		if haveCursor {
			stmt = stmt + and(where) + cmp
			a = append(a[:len(a):len(a)], cursor)
		}
		var err error
		buf, err = s.readChunk(ctx, stmt+order, append(a[:len(a):len(a)], chunk), buf[:0])
		if err != nil {
			return err
		}
		for i := range buf {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := s.record(&buf[i])
			if err != nil {
				if s.pruned(ctx, buf[i].rowid) {
					continue // pruned since its row was read (prune.go)
				}
				return err
			}
			if !fn(r) {
				return nil
			}
		}
		if len(buf) < chunk {
			return ctx.Err()
		}
		cursor, haveCursor = buf[len(buf)-1].rowid, true
	}
}

// filters returns q's WHERE clause (empty, or starting with " WHERE ") and
// its arguments.
func filters(q warden.Query) (string, []any) {
	var w strings.Builder
	var args []any
	add := func(cond string, v any) {
		w.WriteString(and(w.String()))
		w.WriteString(cond)
		args = append(args, v)
	}
	for _, f := range []struct{ col, v string }{
		{"session_id", q.Session}, {"event", q.Event}, {"decision", q.Decision},
		{"surface", q.Surface}, {"policy_id", q.Policy}, {"agent_id", q.Agent},
		{"tenant", q.Tenant},
	} {
		if f.v != "" {
			add(f.col+" = ?", f.v)
		}
	}
	if !q.Since.IsZero() {
		add("time >= ?", ceilMicro(q.Since))
	}
	if !q.Until.IsZero() {
		add("time < ?", ceilMicro(q.Until))
	}
	return w.String(), args
}

// and is what joins one more condition to the WHERE clause where.
func and(where string) string {
	if where == "" {
		return " WHERE "
	}
	return " AND "
}

// ceilMicro is t in unix microseconds, rounded up: a stored time (whole
// microseconds) is >= t, or < t, exactly when it is >= or < ceilMicro(t).
func ceilMicro(t time.Time) int64 {
	us := t.UnixMicro()
	if t.After(time.UnixMicro(us)) {
		us++
	}
	return us
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
			&r.Caller, &r.Tenant, &r.ApprovalID); err != nil {
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

// record completes w's record with its blob.
func (s *Store) record(w *row) (*warden.Record, error) {
	r := new(warden.Record)
	*r = w.rec
	blob, err := s.rblobs.read(w.off, w.nRes+w.nIn+w.nOut+w.nVws)
	if err != nil {
		return nil, fmt.Errorf("sqlite: run %s: %w", r.ID, err)
	}
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
	r.Time = time.UnixMicro(w.us).UTC()
	if len(w.codes) > 0 {
		if err := json.Unmarshal(w.codes, &r.ReasonCodes); err != nil {
			return nil, fmt.Errorf("sqlite: run %s: reason codes: %w", r.ID, err)
		}
	}
	r.Results = []warden.Result{}
	if len(results) > 0 {
		if err := json.Unmarshal(results, &r.Results); err != nil {
			return nil, fmt.Errorf("sqlite: run %s: results: %w", r.ID, err)
		}
		if r.Results == nil { // stored "null"
			r.Results = []warden.Result{}
		}
	}
	return r, nil
}
