package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
)

// Scan reads the trace in chunks of rows keyset-paged on seq (the one order
// every writer shares: seqs are taken under the chain head's lock, so they
// commit in order and a reader sees a prefix of them: a seq cursor never
// skips or repeats a record). Each chunk is one short query whose rows are
// read and closed before fn runs, so no transaction or connection is held
// while the caller works; memory is one chunk.
const (
	firstChunk = 100 // rows in the first query: most scans want a page
	maxChunk   = 500 // rows in later ones (whole rows, blobs included)
)

const scanCols = `SELECT seq, id, time, event, surface, direction, request_id,
	agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
	policy_id, policy_version, latency_us, results, input, output,
	policy_revision, views, caller, tenant, approval_id, tool, prev_hash, hash
	FROM runs`

// row is one scanned row.
type row struct {
	seq                          int64
	rec                          warden.Record
	us                           int64
	codes, results, in, out, vws []byte
	prevHash, hash               []byte
}

func (w *row) dest() []any {
	r := &w.rec
	return []any{&w.seq, &r.ID, &w.us, &r.Event, &r.Surface, &r.Direction,
		&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
		&r.Decision, &r.Reason, &w.codes, &r.PolicyID, &r.PolicyVersion,
		&r.LatencyUS, &w.results, &w.in, &w.out, &r.PolicyRevision, &w.vws,
		&r.Caller, &r.Tenant, &r.ApprovalID, &r.Tool, &w.prevHash, &w.hash}
}

// Scan calls fn with each record matching q, in recording order, newest
// first unless q.Oldest, until fn returns false, the records end or ctx is
// done (then ctx.Err()). See warden.Query for the cursor and the budget:
// the column filters are the chunk query's WHERE clause, so their rows are
// examined a chunk at a time; q.Text is tested here, row by row.
func (s *Store) Scan(ctx context.Context, q warden.Query, fn func(*warden.Record) bool) error {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		cursor     int64
		haveCursor bool
	)
	if q.After != "" {
		err := s.pool.QueryRow(ctx, `SELECT seq FROM runs WHERE id = $1`, q.After).Scan(&cursor)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: %w: %q", warden.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return readErr(ctx, "find cursor", err)
		}
		haveCursor = true
	}
	var text *warden.TextMatcher
	if q.Text != "" {
		if strings.IndexByte(q.Text, 0) >= 0 {
			return nil // matches nothing (warden.TextMatcher)
		}
		text = warden.NewTextMatcher(q.Text)
	}
	where, args := filters(q)
	order, cmp := " ORDER BY seq DESC LIMIT ", "seq < "
	if q.Oldest {
		order, cmp = " ORDER BY seq ASC LIMIT ", "seq > "
	}
	scanned := 0
	var buf []row
	for chunk := firstChunk; ; chunk = min(chunk*4, maxChunk) {
		stmt, a := scanCols+where, args[:len(args):len(args)]
		if haveCursor {
			a = append(a, cursor)
			stmt += and(where) + cmp + "$" + strconv.Itoa(len(a))
		}
		stmt += order + strconv.Itoa(chunk)
		var err error
		if buf, err = s.readChunk(ctx, stmt, a, buf[:0]); err != nil {
			return err
		}
		for i := range buf {
			if err := ctx.Err(); err != nil {
				return err
			}
			w := &buf[i]
			last := i == len(buf)-1 && len(buf) < chunk
			if text == nil || text.MatchFields(&w.rec) || text.Contains(w.in) {
				r, err := record(w)
				if err != nil {
					return err
				}
				if !fn(r) {
					return nil
				}
			}
			if text != nil {
				// With Text, rows are examined one by one: the budget is
				// looked at after each.
				scanned++
				if q.Budget > 0 && !last && time.Since(start) >= q.Budget {
					return &warden.ScanStopped{After: w.rec.ID, Scanned: scanned}
				}
			}
		}
		if len(buf) < chunk {
			return ctx.Err()
		}
		lastRow := &buf[len(buf)-1]
		if text == nil {
			// The rows are in hand: the budget can only save the next query.
			scanned += len(buf)
			if q.Budget > 0 && time.Since(start) >= q.Budget {
				return &warden.ScanStopped{After: lastRow.rec.ID, Scanned: scanned}
			}
		}
		cursor, haveCursor = lastRow.seq, true
	}
}

// readChunk runs one chunk's query and appends its rows to buf.
func (s *Store) readChunk(ctx context.Context, query string, args []any, buf []row) ([]row, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, readErr(ctx, "query runs", err)
	}
	defer rows.Close()
	for rows.Next() {
		buf = append(buf, row{})
		if err := rows.Scan(buf[len(buf)-1].dest()...); err != nil {
			return nil, readErr(ctx, "read run", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, readErr(ctx, "read runs", err)
	}
	return buf, nil
}

// filters returns q's WHERE clause (empty, or starting with " WHERE ") and
// its arguments ($1, $2, ...).
func filters(q warden.Query) (string, []any) {
	var w strings.Builder
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		w.WriteString(and(w.String()))
		w.WriteString(cond + " $" + strconv.Itoa(len(args)))
	}
	for _, f := range []struct{ col, v string }{
		{"session_id", q.Session}, {"event", q.Event}, {"decision", q.Decision},
		{"surface", q.Surface}, {"policy_id", q.Policy}, {"agent_id", q.Agent},
		{"tenant", q.Tenant}, {"tool", q.Tool}, {"id", q.ID},
	} {
		if f.v != "" {
			add(f.col+" =", f.v)
		}
	}
	if q.ShadowDisagrees {
		w.WriteString(and(w.String()))
		w.WriteString("shadow <> '' AND shadow <> decision")
	}
	if !q.Since.IsZero() {
		add("time >=", ceilMicro(q.Since))
	}
	if !q.Until.IsZero() {
		add("time <", ceilMicro(q.Until))
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

// readErr is ctx's error if ctx is done, else err with context.
func readErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// record is w as a warden.Record of its own (fn may keep it).
func record(w *row) (*warden.Record, error) {
	r := new(warden.Record)
	*r = w.rec
	if len(w.in) > 0 {
		r.Input = json.RawMessage(w.in)
	}
	if len(w.out) > 0 {
		r.Output = json.RawMessage(w.out)
	}
	if len(w.vws) > 0 {
		r.Views = json.RawMessage(w.vws)
	}
	r.Time = time.UnixMicro(w.us).UTC()
	r.PrevHash, r.Hash = hex.EncodeToString(w.prevHash), hex.EncodeToString(w.hash)
	if len(w.codes) > 0 {
		if err := json.Unmarshal(w.codes, &r.ReasonCodes); err != nil {
			return nil, fmt.Errorf("postgres: run %s: reason codes: %w", r.ID, err)
		}
	}
	r.Results = []warden.Result{}
	if len(w.results) > 0 {
		if err := json.Unmarshal(w.results, &r.Results); err != nil {
			return nil, fmt.Errorf("postgres: run %s: results: %w", r.ID, err)
		}
		if r.Results == nil {
			r.Results = []warden.Result{}
		}
	}
	return r, nil
}
