package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The state a fleet shares (approvals.go, acs.go, labels.go, agbom.go) lives
// in the tables of schema 2 (schema.go). None of it goes through the trace's
// group commit: each change is one statement, or one short transaction, on
// the Store's pool, committed when the call returns. Correctness across
// replicas comes from PostgreSQL itself, at READ COMMITTED: a change is an
// UPDATE whose WHERE re-checks the state it expects (PostgreSQL re-evaluates
// it on the newest row version after waiting for a concurrent writer's row
// lock), an INSERT … ON CONFLICT, or a transaction serialized by a
// transaction-scoped advisory lock on the one thing it bounds (a session's
// labels, an agent's AgBOM, a server's pins).
//
// Times are unix microseconds, UTC, 0 for the zero time, as in runs; they
// read back in UTC, truncated to the microsecond.

// stateTimeout bounds a call made with the package's stateCtx; a Store's
// own shared-state calls are bounded by Store.stateCtx.
const stateTimeout = 10 * time.Second

// minStateTimeout is the least bound of a Store's shared-state call.
const minStateTimeout = 2 * time.Second

// Advisory lock classes of the two-key pg_advisory_xact_lock(class, key)
// form (distinct from the migrations' one-key lock): the key is
// hashtext() of what is locked.
const (
	lockLabels int32 = 0x7764_0001 // a session's labels
	lockAgBOM  int32 = 0x7764_0002 // an agent's AgBOM
	lockAgents int32 = 0x7764_0003 // the count of agents with an AgBOM
	lockPins   int32 = 0x7764_0004 // an MCP server's tool pins
)

// toUS is t in unix microseconds, 0 for the zero time.
func toUS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// fromUS is the time of a stored toUS(t): UTC, 0 the zero time.
func fromUS(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// ceilUS is t in unix microseconds, rounded up: "stored >= ceilUS(t)" is
// "the stored time is not before t".
func ceilUS(t time.Time) int64 {
	us := t.UnixMicro()
	if t.After(time.UnixMicro(us)) {
		us++
	}
	return us
}

// pgArgs returns args with every NUL byte of a string (or of a []string's
// strings) replaced by U+FFFD: PostgreSQL's text cannot hold NUL, and a
// session id, tool name or reason an agent sent with one must not make its
// step's approval, chain entry or labels impossible to store (which would
// fail the step for a reason the agent chose). Writes and lookups map the
// same way, so equality is kept; such a string reads back with U+FFFD.
func pgArgs(args ...any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if strings.IndexByte(v, 0) >= 0 {
				args[i] = strings.ReplaceAll(v, "\x00", "\uFFFD")
			}
		case []string:
			if slices.ContainsFunc(v, func(s string) bool { return strings.IndexByte(s, 0) >= 0 }) {
				c := make([]string, len(v))
				for j, s := range v {
					c[j] = strings.ReplaceAll(s, "\x00", "\uFFFD")
				}
				args[i] = c
			}
		}
	}
	return args
}

// isUnique reports whether err is a unique violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// stateCtx bounds ctx by stateTimeout.
func stateCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, stateTimeout)
}

// stateCtx bounds one shared-state call by the store's Options.Timeout (at
// least minStateTimeout) when ctx has no earlier deadline: PostgreSQL
// unreachable, or a row or advisory lock held too long, fails the call (and
// so the step, closed) within that time instead of hanging it.
func (s *Store) stateCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, max(s.opts.Timeout, minStateTimeout))
}

// stateErr is err with what failed, and ctx's error when ctx ended.
func stateErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("postgres: %s: %w (%v)", what, ctx.Err(), err)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// statePool returns the pool the shared state uses.
func (s *Store) statePool() *pgxpool.Pool { return s.pool }

// writable returns ErrReadOnly on a read-only store, ErrClosed on a
// closed one.
func (s *Store) writable() error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// stateTx runs fn in one transaction and commits it when fn returns nil.
// fn's own errors are returned as they are; the transaction's are wrapped
// with what.
func (s *Store) stateTx(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.statePool().Begin(ctx)
	if err != nil {
		return stateErr(ctx, what, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return stateErr(ctx, what, err)
	}
	return nil
}

// xactLock takes the transaction-scoped advisory lock (class, hashtext(key)).
func xactLock(ctx context.Context, tx pgx.Tx, class int32, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, pgArgs(class, key)...)
	return err
}
