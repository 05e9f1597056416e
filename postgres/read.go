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

	"github.com/wardenhq/warden/audit"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracesql"
)

// Scan reads the trace in chunks of rows keyset-paged on seq (the one order
// every writer shares: seqs are taken under the chain head's lock, so they
// commit in order and a reader sees a prefix of them: a seq cursor never
// skips or repeats a record). Each chunk is one short query whose rows are
// read and closed before fn runs, so no transaction or connection is held
// while the caller works. A chunk carries the blobs (results, input, output,
// views) of the rows whose blobs total at most inlineBlobs bytes; a bigger
// row's are read alone just before fn gets it, so a chunk holds at most
// maxChunk*inlineBlobs blob bytes (8 MiB) whatever the records' sizes.
const (
	firstChunk  = 100      // rows in the first query: most scans want a page
	maxChunk    = 500      // rows in later ones
	inlineBlobs = 16 << 10 // blob bytes a row may carry in a chunk
)

// chunkCols are scanCols for a chunk: the blobs only of the small rows, and
// whether the row is big.
var chunkCols = strings.ReplaceAll(`SELECT seq, id, time, event, surface, direction, request_id,
	agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
	policy_id, policy_version, latency_us,
	CASE WHEN z.n <= {inline} THEN results END, CASE WHEN z.n <= {inline} THEN input END,
	CASE WHEN z.n <= {inline} THEN output END, CASE WHEN z.n <= {inline} THEN views END,
	policy_revision, caller, tenant, approval_id, tool, prev_hash, hash, sealed, z.n > {inline}
	FROM runs, LATERAL (SELECT octet_length(results) + octet_length(input) +
	octet_length(output) + octet_length(views) AS n) z`, "{inline}", strconv.Itoa(inlineBlobs))

const scanCols = `SELECT seq, id, time, event, surface, direction, request_id,
	agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
	policy_id, policy_version, latency_us, results, input, output,
	policy_revision, views, caller, tenant, approval_id, tool, prev_hash, hash,
	sealed FROM runs`

// row is one scanned row.
type row struct {
	seq                          int64
	rec                          audit.Record
	us                           int64
	codes, results, in, out, vws []byte
	prevHash, hash               []byte
	sealed                       []byte // nil when NULL: no allocation for a record without
	big                          bool   // a chunk's row whose blobs are not read yet
}

// chunkDest is dest for chunkCols.
func (w *row) chunkDest() []any {
	r := &w.rec
	return []any{&w.seq, &r.ID, &w.us, &r.Event, &r.Surface, &r.Direction,
		&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
		&r.Decision, &r.Reason, &w.codes, &r.PolicyID, &r.PolicyVersion,
		&r.LatencyUS, &w.results, &w.in, &w.out, &w.vws, &r.PolicyRevision,
		&r.Caller, &r.Tenant, &r.ApprovalID, &r.Tool, &w.prevHash, &w.hash, &w.sealed, &w.big}
}

// loadBlobs reads a big row's blobs; false when the row is gone.
func (s *Store) loadBlobs(ctx context.Context, w *row) (bool, error) {
	err := s.pool.QueryRow(ctx, `SELECT results, input, output, views FROM runs WHERE seq = $1`, w.seq).
		Scan(&w.results, &w.in, &w.out, &w.vws)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, readErr(ctx, "read run "+w.rec.ID, err)
	}
	w.big = false
	return true, nil
}

func (w *row) dest() []any {
	r := &w.rec
	return []any{&w.seq, &r.ID, &w.us, &r.Event, &r.Surface, &r.Direction,
		&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
		&r.Decision, &r.Reason, &w.codes, &r.PolicyID, &r.PolicyVersion,
		&r.LatencyUS, &w.results, &w.in, &w.out, &r.PolicyRevision, &w.vws,
		&r.Caller, &r.Tenant, &r.ApprovalID, &r.Tool, &w.prevHash, &w.hash, &w.sealed}
}

// Scan calls fn with each record matching q, in recording order, newest
// first unless q.Oldest, until fn returns false, the records end or ctx is
// done (then ctx.Err()). See audit.Query for the cursor and the budget:
// the column filters are the chunk query's WHERE clause, so their rows are
// examined a chunk at a time; q.Text is tested here, row by row.
func (s *Store) Scan(ctx context.Context, q audit.Query, fn func(*audit.Record) bool) error {
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
			return fmt.Errorf("postgres: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return readErr(ctx, "find cursor", err)
		}
		haveCursor = true
	}
	var text *audit.TextMatcher
	if q.Text != "" {
		if strings.IndexByte(q.Text, 0) >= 0 {
			return nil // matches nothing (audit.TextMatcher)
		}
		text = audit.NewTextMatcher(q.Text)
	}
	where, args := filters(q)
	order, cmp := " ORDER BY seq DESC LIMIT ", "seq < "
	if q.Oldest {
		order, cmp = " ORDER BY seq ASC LIMIT ", "seq > "
	}
	scanned := 0
	var buf []row
	for chunk := firstChunk; ; chunk = min(chunk*4, maxChunk) {
		stmt, a := chunkCols+where, args[:len(args):len(args)]
		if haveCursor {
			a = append(a, cursor)
			stmt += tracesql.And(where) + cmp + "$" + strconv.Itoa(len(a))
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
			r, err := s.examine(ctx, w, text)
			if err != nil {
				return err
			}
			if r != nil && !fn(r) {
				return nil
			}
			if text != nil {
				// With Text, rows are examined one by one: the budget is
				// looked at after each.
				scanned++
				if q.Budget > 0 && !last && time.Since(start) >= q.Budget {
					return &audit.ScanStopped{After: w.rec.ID, Scanned: scanned}
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
				return &audit.ScanStopped{After: lastRow.rec.ID, Scanned: scanned}
			}
		}
		cursor, haveCursor = lastRow.seq, true
	}
}

// examine returns w's record when it matches text (nil: any), else nil;
// nil too when w is big and was deleted since its chunk was read. A big
// row's blobs are read only when they are needed: to test Input, or for a
// match.
func (s *Store) examine(ctx context.Context, w *row, text *audit.TextMatcher) (*audit.Record, error) {
	match := text == nil || text.MatchFields(&w.rec)
	if !match || w.big {
		if w.big {
			ok, err := s.loadBlobs(ctx, w)
			if err != nil || !ok {
				return nil, err
			}
		}
		if !match && !text.Contains(w.in) {
			w.results, w.in, w.out, w.vws = nil, nil, nil, nil
			return nil, nil
		}
	}
	r, err := record(w)
	w.results, w.in, w.out, w.vws = nil, nil, nil, nil // r has them
	return r, err
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
		if err := rows.Scan(buf[len(buf)-1].chunkDest()...); err != nil {
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
func filters(q audit.Query) (string, []any) {
	return tracesql.Where(q, func(n int) string { return "$" + strconv.Itoa(n) })
}

// readErr is ctx's error if ctx is done, else err with context.
func readErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// record is w as a audit.Record of its own (fn may keep it).
func record(w *row) (*audit.Record, error) {
	r := new(audit.Record)
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
	if len(w.sealed) > 0 {
		r.Sealed = json.RawMessage(w.sealed)
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
