package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracesql"
)

// An ACS step makes two writes (its request key, then its chain entry),
// each a transaction of its own would serialize every step of every
// session on SQLite's write lock: ~250 µs a step, ~4,000 steps a second.
// The two are therefore group-committed, like the records: concurrent
// RememberRequest and AppendACSEntry calls join one IMMEDIATE transaction.
// The first caller to find no batch running leads: it takes every waiting
// call (at most acsMaxBatch), runs them in order in one transaction,
// answers each, and hands the lead to the next waiting call, if any. The
// calls of a batch are independent: one refused (a replay, a moved head)
// writes nothing of its own and does not affect the others, and they run
// in arrival order, so two calls with the same key or the same head in one
// batch see each other. A transaction that fails answers every call of the
// batch with its error.

// acsMaxBatch bounds the calls committed in one transaction.
const acsMaxBatch = 256

// acsBatchTimeout bounds one batch's transaction (it may wait for another
// process's write lock up to the busy timeout).
const acsBatchTimeout = 30 * time.Second

// acsOp is one RememberRequest or AppendACSEntry waiting for its batch.
type acsOp struct {
	session string
	// RememberRequest
	key    string
	at     time.Time
	window time.Duration
	// AppendACSEntry (e != nil)
	prev string
	e    *warden.ACSEntry

	done chan error    // the call's answer
	lead chan struct{} // closed when the call is to lead the next batch
}

// acsBatcher holds the waiting calls.
type acsBatcher struct {
	mu      sync.Mutex
	waiting []*acsOp
	running bool
}

// acsDo runs op in a group-committed batch and returns its answer.
func (s *Store) acsDo(ctx context.Context, op *acsOp) error {
	if s.adb == nil {
		return ErrReadOnly
	}
	op.done, op.lead = make(chan error, 1), make(chan struct{})
	b := &s.acsBatch
	b.mu.Lock()
	b.waiting = append(b.waiting, op)
	if b.running {
		b.mu.Unlock()
		select {
		case err := <-op.done:
			return err
		case <-op.lead:
		}
		b.mu.Lock()
	}
	b.running = true
	ops := b.waiting
	if len(ops) > acsMaxBatch {
		ops = ops[:acsMaxBatch]
	}
	b.waiting = append([]*acsOp(nil), b.waiting[len(ops):]...)
	b.mu.Unlock()

	s.acsCommit(ops)

	b.mu.Lock()
	if len(b.waiting) > 0 {
		close(b.waiting[0].lead) // it leads the next batch
	} else {
		b.running = false
	}
	b.mu.Unlock()
	return <-op.done
}

// acsCommit runs ops in one transaction and answers each.
func (s *Store) acsCommit(ops []*acsOp) {
	ctx, cancel := context.WithTimeout(context.Background(), acsBatchTimeout)
	defer cancel()
	errs := make([]error, len(ops))
	err := s.acsBatchTx(ctx, ops, errs)
	for i, op := range ops {
		if err != nil {
			op.done <- err
		} else {
			op.done <- errs[i]
		}
	}
}

// acsBatchTx runs the batch's transaction; a panic in it is an error for
// every call (the lead is handed on whatever happens).
func (s *Store) acsBatchTx(ctx context.Context, ops []*acsOp, errs []error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlite: ACS batch: panic: %v", p)
		}
	}()
	return s.acsTx(ctx, "ACS batch", []int{acsForget, acsRemember, acsRenew, acsAdvance, acsExists, acsInsert}, func(st []*sql.Stmt) error {
		for i, op := range ops {
			var err error
			if op.e == nil {
				err = s.remember(ctx, st[0], st[1], st[2], op)
			} else {
				err = s.advance(ctx, st[3], st[4], st[5], op)
			}
			if err != nil && !errors.Is(err, warden.ErrReplay) && !errors.Is(err, warden.ErrChainMoved) && !errors.Is(err, warden.ErrNoSession) {
				return err // the transaction failed: every call gets it
			}
			errs[i] = err
		}
		return nil
	})
}

// remember records the key, or renews it when its earlier record is older
// than the window, and then forgets the session's other expired keys; a
// key still in the window is ErrReplay and nothing is written (so a
// refused call forgets nothing either).
func (s *Store) remember(ctx context.Context, forget, insert, renew *sql.Stmt, op *acsOp) error {
	const what = "remember ACS request"
	cutoff := tracesql.CeilMicro(op.at.Add(-op.window))
	res, err := insert.ExecContext(ctx, op.session, op.key, op.at.UnixMicro())
	if err != nil {
		return s.approvalErr(ctx, what, err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		if res, err = renew.ExecContext(ctx, op.at.UnixMicro(), op.session, op.key, cutoff); err == nil {
			n, err = res.RowsAffected()
		}
	}
	if err != nil {
		return s.approvalErr(ctx, what, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q in session %q", warden.ErrReplay, op.key, op.session)
	}
	if _, err := forget.ExecContext(ctx, op.session, cutoff); err != nil {
		return s.approvalErr(ctx, what, err)
	}
	return nil
}

// advance moves the session's head from prev to the entry's hash and
// inserts the entry (ErrChainMoved, ErrNoSession: nothing written).
func (s *Store) advance(ctx context.Context, adv, exists, insert *sql.Stmt, op *acsOp) error {
	const what = "append ACS entry"
	e := op.e
	var seq int64
	err := adv.QueryRowContext(ctx, e.EntryHash, op.session, op.prev).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		var one int
		switch err = exists.QueryRowContext(ctx, op.session).Scan(&one); {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %q", warden.ErrNoSession, op.session)
		case err == nil:
			return fmt.Errorf("%w: session %q", warden.ErrChainMoved, op.session)
		}
	}
	if err != nil {
		return s.approvalErr(ctx, what, err)
	}
	if _, err := insert.ExecContext(ctx, op.session, seq, e.EntryID, e.StepID, e.StepType,
		e.RequestHash, micro(e.Timestamp), e.PreviousHash, e.EntryHash, e.Decision,
		e.RecordID); err != nil {
		return s.approvalErr(ctx, what, err)
	}
	return nil
}
