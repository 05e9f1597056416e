package postgres

import (
	"context"

	"github.com/wardenhq/warden/internal/tracesql"

	"github.com/jackc/pgx/v5"
)

// rowDB is the store as the statements shared with SQLite
// (tracesql.RowDB) use it: on the pool, or in one transaction (stateTx),
// each call bounded by stateCtx, strings mapped by pgArgs. Lock takes
// advisory locks, so the bounds hold with several replicas writing.
type rowDB struct {
	s  *Store
	tx pgx.Tx // in Tx
}

// Query runs q (see tracesql.RowDB).
func (d rowDB) Query(ctx context.Context, what, q string, args, dest []any, row func()) error {
	ctx, cancel := d.s.stateCtx(ctx)
	defer cancel()
	query := d.s.statePool().Query
	if d.tx != nil {
		query = d.tx.Query
	}
	rows, err := query(ctx, q, pgArgs(args...)...)
	if err == nil {
		_, err = pgx.ForEachRow(rows, dest, func() error { row(); return nil })
	}
	if err != nil {
		return stateErr(ctx, what, err)
	}
	return nil
}

// Exec runs q in the transaction.
func (d rowDB) Exec(ctx context.Context, what, q string, args ...any) (int64, error) {
	tag, err := d.tx.Exec(ctx, q, pgArgs(args...)...)
	if err != nil {
		return 0, stateErr(ctx, what, err)
	}
	return tag.RowsAffected(), nil
}

// Tx runs fn in one transaction, bounded by stateCtx.
func (d rowDB) Tx(ctx context.Context, what string, fn func(context.Context, tracesql.RowDB) error) error {
	ctx, cancel := d.s.stateCtx(ctx)
	defer cancel()
	return d.s.stateTx(ctx, what, func(tx pgx.Tx) error { return fn(ctx, rowDB{d.s, tx}) })
}

// Lock takes the advisory lock of l's class (lockAgBOM, lockAgents,
// lockPins) and key.
func (d rowDB) Lock(ctx context.Context, l tracesql.Lock, key string) error {
	class := [...]int32{tracesql.LockAgBOM: lockAgBOM, tracesql.LockAgents: lockAgents, tracesql.LockPins: lockPins}[l]
	if err := xactLock(ctx, d.tx, class, key); err != nil {
		return stateErr(ctx, "lock", err)
	}
	return nil
}
