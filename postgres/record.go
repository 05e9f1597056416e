package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/jsonappend"
	"github.com/wardenhq/warden/internal/tracesql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracehash"
)

// request states.
const (
	pending   int32 = iota // queued, the writer has not taken it
	taken                  // the writer is committing it
	abandoned              // its Record gave up: the writer skips it
)

// minCommit is the least time a batch's transaction is given, however
// close its oldest record is to its deadline.
const minCommit = 250 * time.Millisecond

// request is one Record in flight. Its row is encoded and its content
// digest computed on the caller's goroutine; the writer chains and inserts.
type request struct {
	row      []any // the runs columns of copyColumns, prev_hash and hash last
	content  [tracehash.Size]byte
	id       string
	size     int // the bytes of its blobs
	deadline time.Time
	state    atomic.Int32
	err      error      // set by the writer when this record alone failed
	done     chan error // buffered 1; the writer sends exactly once
}

// copyColumns are the runs columns the writer inserts, in row order.
var copyColumns = []string{"seq", "id", "time", "event", "surface", "direction",
	"request_id", "agent_id", "session_id", "turn_id", "step_id", "decision",
	"reason", "reason_codes", "policy_id", "policy_version", "latency_us",
	"results", "input", "output", "policy_revision", "views", "caller", "tenant",
	"approval_id", "tool", "shadow", "sealed", "prev_hash", "hash"}

// Indexes in request.row of the columns the writer sets.
const (
	seqCol  = 0
	prevCol = 28
	hashCol = 29
)

// nonNil is b, or an empty slice for nil (pgx sends nil as NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// canons are the record digests' encoders, reused.
var canons = sync.Pool{New: func() any { return tracehash.NewCanon() }}

func newRequest(rec *audit.Record, timeout time.Duration) (*request, error) {
	results := rec.Results
	if results == nil {
		results = []warden.Result{}
	}
	// The bytes encoding/json writes (the hash covers them), without its
	// reflection: the appenders the SQLite store uses.
	res, err := audit.AppendResults(nil, results)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode results: %w", err)
	}
	var codes []byte // NULL when empty, as SQLite
	if len(rec.ReasonCodes) > 0 {
		codes = jsonappend.Strings(nil, rec.ReasonCodes)
	}
	in, out, views := nonNil(rec.Input), nonNil(rec.Output), nonNil(rec.Views)
	us := rec.Time.UnixMicro()
	r := &request{id: rec.ID, done: make(chan error, 1), deadline: time.Now().Add(timeout),
		size: len(res) + len(in) + len(out) + len(views)}
	c := canons.Get().(*tracehash.Canon)
	defer canons.Put(c)
	shadow := rec.ShadowDecision()
	c.DigestV2(&tracehash.Row{
		ID: rec.ID, TimeUS: us, Event: rec.Event, Surface: rec.Surface, Direction: rec.Direction,
		RequestID: rec.RequestID, AgentID: rec.AgentID, SessionID: rec.SessionID,
		TurnID: rec.TurnID, StepID: rec.StepID, Decision: rec.Decision, Reason: rec.Reason,
		ReasonCodes: codes, PolicyID: rec.PolicyID, PolicyVersion: rec.PolicyVersion,
		LatencyUS: rec.LatencyUS, Results: res, Input: in, Output: out,
		PolicyRevision: rec.PolicyRevision, Views: views, Caller: rec.Caller,
		Tenant: rec.Tenant, ApprovalID: rec.ApprovalID, Tool: rec.Tool, Shadow: shadow,
		Sealed: rec.Sealed,
	}, &r.content)
	var codesArg any
	if codes != nil {
		codesArg = codes
	}
	var sealed any // NULL when there are none
	if len(rec.Sealed) > 0 {
		sealed = []byte(rec.Sealed) // as Input: the caller's until Record returns
	}
	r.row = []any{int64(0), rec.ID, us, rec.Event, rec.Surface, rec.Direction,
		rec.RequestID, rec.AgentID, rec.SessionID, rec.TurnID, rec.StepID, rec.Decision,
		rec.Reason, codesArg, rec.PolicyID, rec.PolicyVersion, rec.LatencyUS,
		res, in, out, rec.PolicyRevision, views, rec.Caller, rec.Tenant,
		rec.ApprovalID, rec.Tool, shadow, sealed, nil, nil}
	return r, nil
}

// Record stores rec and returns once the transaction holding it has
// committed. It gives up after ctx is done or Options.Timeout has passed
// (then rec is not stored) unless the writer has taken rec: then it waits
// for that transaction, which is itself bounded (see Options.Timeout), so a
// Record returns within the Timeout plus minCommit when PostgreSQL is
// unreachable. A commit whose outcome the connection's loss hides is
// reported as an error: the decision is denied though its record may be
// stored, the fail-closed side. rec must not be modified until Record
// returns.
func (s *Store) Record(ctx context.Context, rec *audit.Record) error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if rec == nil || rec.ID == "" {
		return errors.New("postgres: record has no id")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: record not stored: %w", err)
	}
	req, err := newRequest(rec, s.opts.Timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(ctx, req.deadline)
	defer cancel()

	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.queue <- req:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return fmt.Errorf("postgres: record not stored (queue full): %w", ctx.Err())
	}
	select {
	case err = <-req.done:
	case <-ctx.Done():
		if req.state.CompareAndSwap(pending, abandoned) {
			return fmt.Errorf("postgres: record not stored: %w", ctx.Err())
		}
		err = <-req.done // the writer is committing it: its result is the truth
	}
	return err
}

// run is the writer goroutine: it commits the queue in batches until the
// queue is closed and drained.
func (s *Store) run() {
	defer close(s.done)
	batch := make([]*request, 0, s.opts.MaxBatch)
	for first := range s.queue {
		batch = append(batch[:0], first)
		size := first.size
	drain:
		for len(batch) < s.opts.MaxBatch && size < tracesql.MaxBatchBytes {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break drain
				}
				batch = append(batch, r)
				size += r.size
			default:
				break drain
			}
		}
		s.commit(batch)
		clear(batch)
	}
}

// commit writes the live records of b in one transaction and answers them.
func (s *Store) commit(b []*request) {
	live := b[:0:0]
	var deadline time.Time
	for _, r := range b {
		if r.state.CompareAndSwap(pending, taken) {
			live = append(live, r)
			if deadline.IsZero() || r.deadline.Before(deadline) {
				deadline = r.deadline
			}
		}
	}
	if len(live) == 0 {
		return
	}
	if least := time.Now().Add(minCommit); deadline.Before(least) {
		deadline = least
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	start := time.Now()
	err := s.write(ctx, live)
	var early *beforeCommit
	if errors.As(err, &early) && ctx.Err() == nil {
		// Nothing was committed: a connection the server had dropped
		// (a restart, a failover, pg_terminate_backend) fails the first
		// statement it carries; one more try takes a fresh one.
		for _, r := range live {
			r.err = nil
		}
		err = s.write(ctx, live)
	}
	cancel()
	if s.opts.OnBatch != nil {
		s.opts.OnBatch(len(live), time.Since(start), err)
	}
	if err != nil {
		s.nErrors.Add(1)
	} else {
		s.nBatches.Add(1)
		for _, r := range live {
			if r.err == nil {
				s.nRecords.Add(1)
			}
		}
	}
	for _, r := range live {
		e := err
		if e == nil {
			e = r.err
		}
		r.done <- e
	}
}

// insertSQL inserts a batch as one array per column (request.row's order,
// copyColumns): one statement whatever the batch's size, sent in the same
// round trip as the head's update and the commit.
const insertSQL = `INSERT INTO runs (seq, id, time, event, surface, direction,
	request_id, agent_id, session_id, turn_id, step_id, decision, reason,
	reason_codes, policy_id, policy_version, latency_us, results, input, output,
	policy_revision, views, caller, tenant, approval_id, tool, shadow, sealed, prev_hash, hash)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[],
	$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
	$13::text[], $14::bytea[], $15::text[], $16::text[], $17::bigint[], $18::bytea[],
	$19::bytea[], $20::bytea[], $21::text[], $22::bytea[], $23::text[], $24::text[],
	$25::text[], $26::text[], $27::text[], $28::bytea[], $29::bytea[], $30::bytea[])`

// fastInsertSQL is insertSQL made conditional on the chain head being the
// one this Store wrote last ($33, $34): in one statement (its own
// transaction) it moves the head to $31, $32 and inserts the batch, or,
// when another writer moved the head since (another replica), does
// nothing (0 rows). The UPDATE takes the head's row lock, so writers
// are serialized as in write's locked path; a writer that waited re-reads
// the head before deciding (READ COMMITTED re-checks the WHERE).
var fastInsertSQL = `WITH h AS (UPDATE trace_head SET seq = $31, hash = $32
	WHERE seq = $33 AND hash = $34 RETURNING 1) ` +
	strings.Replace(insertSQL, "SELECT * FROM unnest(", "SELECT u.* FROM unnest(", 1) +
	` AS u WHERE EXISTS (SELECT 1 FROM h)`

// write inserts b in one transaction. While this Store's writer knows the
// chain head (it wrote it last) it tries writeFast first: one round trip.
// When that inserts nothing (another replica wrote since) or fails on the
// server (an id already stored), nothing was committed and writeLocked
// does it over.
func (s *Store) write(ctx context.Context, b []*request) error {
	if s.headKnown {
		ok, err := s.writeFast(ctx, b)
		if ok || err != nil {
			return err
		}
	}
	return s.writeLocked(ctx, b)
}

// writeFast chains b after the head this writer wrote last and inserts it
// with fastInsertSQL in one round trip. It reports whether b was stored;
// false with a nil error means nothing was committed (the head moved, or
// the server refused the statement, e.g. for an id already stored).
func (s *Store) writeFast(ctx context.Context, b []*request) (bool, error) {
	cols := make([][]any, len(copyColumns))
	for i := range cols {
		cols[i] = make([]any, 0, len(b))
	}
	seq, head := s.headSeq, s.headHash
	for _, r := range b {
		seq++
		h := s.keyed.Chain(&r.content, head)
		r.row[seqCol], r.row[prevCol], r.row[hashCol] = seq, nonNil(head), h[:]
		head = h[:]
		for i, v := range r.row {
			cols[i] = append(cols[i], v)
		}
	}
	args := append(typedColumns(cols), seq, head, s.headSeq, nonNil(s.headHash))
	s.headKnown = false // known again only once this commit is confirmed
	tag, err := s.pool.Exec(ctx, fastInsertSQL, args...)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return false, nil // the server rolled the statement back
		}
		if pgconn.SafeToRetry(err) || errors.Is(err, pgx.ErrNoRows) {
			return false, &beforeCommit{fmt.Errorf("postgres: record not stored: %w", err)}
		}
		return false, fmt.Errorf("postgres: record not stored (or its commit unconfirmed): %w", err)
	}
	if tag.RowsAffected() != int64(len(b)) {
		return false, nil // another writer moved the head: nothing inserted
	}
	s.headSeq, s.headHash, s.headKnown = seq, head, true
	return true, nil
}

// writeLocked inserts b in one transaction, in two round trips. The first begins
// it, takes the chain head's row lock (which every writer of the database
// takes: it serializes them) and reads the head, and finds which of b's ids
// are already stored (each such record fails alone). The writer then gives
// the others the next seqs and their chained hashes, and the second round
// trip inserts them, moves the head and commits. On any error the
// connection, left inside the transaction, is closed by the pool on
// release, which rolls it back.
func (s *Store) writeLocked(ctx context.Context, b []*request) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return &beforeCommit{fmt.Errorf("postgres: record not stored: connect: %w", err)}
	}
	defer conn.Release()
	ids := make([]string, len(b))
	for i, r := range b {
		ids[i] = r.id
	}
	var (
		seq  int64
		head []byte
		seen = map[string]bool{}
	)
	first := &pgx.Batch{}
	first.Queue(`BEGIN`)
	first.Queue(`SELECT seq, hash FROM trace_head FOR UPDATE`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&seq, &head)
	})
	first.Queue(`SELECT id FROM runs WHERE id = ANY($1)`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			seen[id] = true
		}
		return rows.Err()
	})
	if err := conn.SendBatch(ctx, first).Close(); err != nil {
		return &beforeCommit{fmt.Errorf("postgres: record not stored: read the chain head: %w", err)}
	}
	cols := make([][]any, len(copyColumns))
	for i := range cols {
		cols[i] = make([]any, 0, len(b))
	}
	n := 0
	for _, r := range b {
		if seen[r.id] {
			r.err = fmt.Errorf("postgres: record not stored: id %q is already in the trace", r.id)
			continue
		}
		seen[r.id] = true
		seq++
		h := s.keyed.Chain(&r.content, head)
		r.row[seqCol], r.row[prevCol], r.row[hashCol] = seq, nonNil(head), h[:]
		head = h[:]
		for i, v := range r.row {
			cols[i] = append(cols[i], v)
		}
		n++
	}
	second := &pgx.Batch{}
	if n > 0 {
		second.Queue(insertSQL, typedColumns(cols)...)
		second.Queue(`UPDATE trace_head SET seq = $1, hash = $2`, seq, head)
	}
	second.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, second).Close(); err != nil {
		return fmt.Errorf("postgres: record not stored (or its commit unconfirmed): %w", err)
	}
	s.headSeq, s.headHash, s.headKnown = seq, head, true
	return nil
}

// typedColumns turns each column's values into a typed array, the arrays
// insertSQL unnests: int8[], text[] or bytea[] (nil elements are NULL), as
// pgtype.FlatArray so that pgx encodes them without reflection.
func typedColumns(cols [][]any) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		switch c[0].(type) {
		case int64:
			a := make(pgtype.FlatArray[int64], len(c))
			for j, v := range c {
				a[j] = v.(int64)
			}
			out[i] = a
		case string:
			a := make(pgtype.FlatArray[string], len(c))
			for j, v := range c {
				a[j] = v.(string)
			}
			out[i] = a
		default: // []byte or nil: bytea
			a := make(pgtype.FlatArray[[]byte], len(c))
			for j, v := range c {
				if v != nil {
					a[j] = v.([]byte)
				}
			}
			out[i] = a
		}
	}
	return out
}

// beforeCommit is an error of write before it sent the commit: the batch is
// certainly not stored, so it may be tried again.
type beforeCommit struct{ err error }

func (e *beforeCommit) Error() string { return e.err.Error() }
func (e *beforeCommit) Unwrap() error { return e.err }
