package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/internal/tracesql"
)

// Approvals (approval.Rules over tracesql.ApprovalRows) live in trace.db's
// approvals table. Few and seldom written, they skip the record writer's
// group commit: each change is one IMMEDIATE transaction on their own
// connection (adb, approvalTx) with the trace's synchronous setting, as
// durable as a record when it returns, and serialized by SQLite's write lock
// with every other writer, also another process's.

// micro is t in unix microseconds, 0 for the zero time.
var micro = tracesql.Micro

// approvalTx runs fn in one IMMEDIATE transaction (the approvals
// connection's _txlock) and commits it when fn returns nil. It holds the
// store's R lock throughout, so Close waits for it.
func (s *Store) approvalTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if s.adb == nil {
		return ErrReadOnly
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.txMu.Lock() // see Store.txMu
	defer s.txMu.Unlock()
	tx, err := s.adb.BeginTx(ctx, nil)
	if err != nil {
		return s.approvalErr(ctx, what, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.approvalErr(ctx, what, err)
	}
	return nil
}

// approvalErr is ctx's error if ctx is done, else err with context.
func (s *Store) approvalErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("sqlite: %s: %w", what, ctx.Err())
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// approvals is the approval.ApprovalStore a Store embeds (newApprovals).
type approvals = approval.Rules

func newApprovals(s *Store) approvals {
	return approval.NewRules(tracesql.ApprovalRows{DB: rowDB{s: s}, WriteErr: func() error {
		if s.adb == nil {
			return ErrReadOnly
		}
		return s.checkOpen()
	}})
}
