package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

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
	deadline time.Time
	state    atomic.Int32
	err      error      // set by the writer when this record alone failed
	done     chan error // buffered 1; the writer sends exactly once
}

// copyColumns are the runs columns the writer copies in, in row order.
var copyColumns = []string{"seq", "id", "time", "event", "surface", "direction",
	"request_id", "agent_id", "session_id", "turn_id", "step_id", "decision",
	"reason", "reason_codes", "policy_id", "policy_version", "latency_us",
	"results", "input", "output", "policy_revision", "views", "caller", "tenant",
	"approval_id", "tool", "shadow", "prev_hash", "hash"}

// Indexes in request.row of the columns the writer sets.
const (
	seqCol  = 0
	prevCol = 27
	hashCol = 28
)

// nonNil is b, or an empty slice for nil (pgx sends nil as NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func newRequest(rec *warden.Record, timeout time.Duration) (*request, error) {
	results := rec.Results
	if results == nil {
		results = []warden.Result{}
	}
	res, err := json.Marshal(results)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode results: %w", err)
	}
	var codes []byte // NULL when empty, as SQLite
	if len(rec.ReasonCodes) > 0 {
		if codes, err = json.Marshal(rec.ReasonCodes); err != nil {
			return nil, fmt.Errorf("postgres: encode reason codes: %w", err)
		}
	}
	in, out, views := nonNil(rec.Input), nonNil(rec.Output), nonNil(rec.Views)
	us := rec.Time.UnixMicro()
	r := &request{id: rec.ID, done: make(chan error, 1), deadline: time.Now().Add(timeout)}
	tracehash.NewCanon().Digest(&tracehash.Row{
		ID: rec.ID, TimeUS: us, Event: rec.Event, Surface: rec.Surface, Direction: rec.Direction,
		RequestID: rec.RequestID, AgentID: rec.AgentID, SessionID: rec.SessionID,
		TurnID: rec.TurnID, StepID: rec.StepID, Decision: rec.Decision, Reason: rec.Reason,
		ReasonCodes: codes, PolicyID: rec.PolicyID, PolicyVersion: rec.PolicyVersion,
		LatencyUS: rec.LatencyUS, Results: res, Input: in, Output: out,
		PolicyRevision: rec.PolicyRevision, Views: views, Caller: rec.Caller,
		Tenant: rec.Tenant, ApprovalID: rec.ApprovalID, Tool: rec.Tool,
	}, &r.content)
	var codesArg any
	if codes != nil {
		codesArg = codes
	}
	r.row = []any{int64(0), rec.ID, us, rec.Event, rec.Surface, rec.Direction,
		rec.RequestID, rec.AgentID, rec.SessionID, rec.TurnID, rec.StepID, rec.Decision,
		rec.Reason, codesArg, rec.PolicyID, rec.PolicyVersion, rec.LatencyUS,
		res, in, out, rec.PolicyRevision, views, rec.Caller, rec.Tenant,
		rec.ApprovalID, rec.Tool, rec.ShadowDecision(), nil, nil}
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
func (s *Store) Record(ctx context.Context, rec *warden.Record) error {
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
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break drain
				}
				batch = append(batch, r)
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
	err := s.write(ctx, live)
	cancel()
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

// write inserts b in one transaction. Holding the chain head's row lock,
// which every writer of the database takes, it reads the head, rejects the
// records whose id is already stored (each alone), gives the others the next
// seqs and their chained hashes, copies them in and moves the head.
func (s *Store) write(ctx context.Context, b []*request) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: record not stored: begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after Commit
	var (
		seq  int64
		head []byte
	)
	if err := tx.QueryRow(ctx, `SELECT seq, hash FROM trace_head FOR UPDATE`).Scan(&seq, &head); err != nil {
		return fmt.Errorf("postgres: record not stored: read chain head: %w", err)
	}
	ids := make([]string, len(b))
	for i, r := range b {
		ids[i] = r.id
	}
	rows, err := tx.Query(ctx, `SELECT id FROM runs WHERE id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("postgres: record not stored: %w", err)
	}
	seen := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: record not stored: %w", err)
		}
		seen[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: record not stored: %w", err)
	}
	in := make([][]any, 0, len(b))
	for _, r := range b {
		if seen[r.id] {
			r.err = fmt.Errorf("postgres: record not stored: id %q is already in the trace", r.id)
			continue
		}
		seen[r.id] = true
		seq++
		h := tracehash.Chain(&r.content, head)
		r.row[seqCol], r.row[prevCol], r.row[hashCol] = seq, nonNil(head), h[:]
		head = h[:]
		in = append(in, r.row)
	}
	if len(in) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"runs"}, copyColumns, pgx.CopyFromRows(in)); err != nil {
			return fmt.Errorf("postgres: record not stored: insert: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE trace_head SET seq = $1, hash = $2`, seq, head); err != nil {
			return fmt.Errorf("postgres: record not stored: move chain head: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: record not stored (or its commit unconfirmed): %w", err)
	}
	return nil
}
