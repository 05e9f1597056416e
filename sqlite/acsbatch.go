package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wardenhq/warden/acsstate"

	"github.com/wardenhq/warden/internal/tracesql"
)

// An ACS step makes two writes besides its record: its request key before
// it is decided, its chain entry after. Each in a transaction of its own
// would serialize every step of every session on SQLite's write lock, and
// a group commit of their own (as before) still made three commits a step,
// each rewriting its pages in the WAL. They therefore go through the trace
// writer's queue: a RememberRequest or AppendACSEntry call is a request
// whose op is set, gathered with the records into the writer's batch and
// run, in arrival order, in the same transaction as the batch's rows
// (write.go), with statements prepared once on the writer's connection.
//
// The calls of a batch are independent: one refused (a replay, a moved
// head, no such session) writes nothing of its own and affects nothing
// else, and two calls with the same key or the same head in one batch see
// each other. Any other error fails the transaction, and every record and
// call of the batch gets it (as a failed batch of records always has).
// With a trace log, whose records are not rows until indexed, the writer
// runs a batch's calls in a transaction of their own (Store.commit).

// acsOp is one RememberRequest or AppendACSEntry call.
type acsOp struct {
	session string
	// RememberRequest
	key    string
	at     time.Time
	window time.Duration
	// AppendACSEntry (e != nil)
	prev string
	e    *acsstate.Entry
}

// acsDo queues op for the writer and returns its answer.
func (s *Store) acsDo(ctx context.Context, op *acsOp) error {
	if s.queue == nil || s.adb == nil {
		return ErrReadOnly
	}
	req := requestPool.Get().(*request)
	req.op = op
	return s.submit(ctx, req, "ACS write not stored")
}

// runOp runs one call inside the writer's transaction. ErrReplay,
// ErrChainMoved and ErrNoSession are the call's own answer (nothing
// written); any other error is the transaction's.
func (s *Store) runOp(ctx context.Context, op *acsOp) error {
	if op.e == nil {
		return s.remember(ctx, op)
	}
	return s.advance(ctx, op)
}

// remember records the key, or renews it when its earlier record is older
// than the window, and then forgets the session's other expired keys; a
// key still in the window is ErrReplay and nothing is written (so a
// refused call forgets nothing either).
func (s *Store) remember(ctx context.Context, op *acsOp) error {
	w := &s.wst
	cutoff := tracesql.CeilMicro(op.at.Add(-op.window))
	at := op.at.UnixMicro()
	n, err := execCount(ctx, w.acsRemember, op.session, op.key, at)
	if err == nil && n == 0 {
		n, err = execCount(ctx, w.acsRenew, at, op.session, op.key, cutoff)
	}
	if err != nil {
		return fmt.Errorf("sqlite: remember ACS request: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q in session %q", acsstate.ErrReplay, op.key, op.session)
	}
	if _, err := execCount(ctx, w.acsForget, op.session, cutoff); err != nil {
		return fmt.Errorf("sqlite: forget expired ACS requests: %w", err)
	}
	return nil
}

// advance moves the session's head from prev to the entry's hash and
// inserts the entry (ErrChainMoved, ErrNoSession: nothing written).
func (s *Store) advance(ctx context.Context, op *acsOp) error {
	const what = "sqlite: append ACS entry"
	w := &s.wst
	e := op.e
	seq, ok, err := queryInt(ctx, w.acsAdvance, e.EntryHash, op.session, op.prev)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		_, exists, err := queryInt(ctx, w.acsExists, op.session)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		case !exists:
			return fmt.Errorf("%w: %q", acsstate.ErrNoSession, op.session)
		default:
			return fmt.Errorf("%w: session %q", acsstate.ErrChainMoved, op.session)
		}
	}
	if _, err := execCount(ctx, w.acsInsert, op.session, seq, e.EntryID, e.StepID, e.StepType,
		e.RequestHash, micro(e.Timestamp), e.PreviousHash, e.EntryHash, e.Decision,
		e.RecordID); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// namedArgs numbers args for a driver statement.
func namedArgs(args []any) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

// execCount runs a prepared statement that returns no rows and returns how
// many rows it changed.
func execCount(ctx context.Context, st driver.Stmt, args ...any) (int64, error) {
	res, err := st.(driver.StmtExecContext).ExecContext(ctx, namedArgs(args))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryInt runs a prepared statement and returns the integer in the first
// column of its first row; ok is false when it returns no row.
func queryInt(ctx context.Context, st driver.Stmt, args ...any) (n int64, ok bool, err error) {
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, namedArgs(args))
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	v := make([]driver.Value, len(rows.Columns()))
	switch err := rows.Next(v); {
	case errors.Is(err, io.EOF):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	n, isInt := v[0].(int64)
	if !isInt {
		return 0, false, fmt.Errorf("want an integer, got %T", v[0])
	}
	return n, true, nil
}
