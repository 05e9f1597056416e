package sqlite

import (
	"context"
	"database/sql"

	"github.com/wardenhq/warden/internal/tracesql"
)

// rowDB is the store as the statements shared with PostgreSQL
// (tracesql.RowDB) use it: reads on the read-only connections, changes in
// IMMEDIATE transactions on the approvals' connection (approvalTx), one at
// a time, so a bound is checked against what the transaction sees and Lock
// has nothing to do.
type rowDB struct {
	s  *Store
	tx *sql.Tx // in Tx
}

// Query runs q (see tracesql.RowDB), in the transaction or on the
// read-only connections.
func (d rowDB) Query(ctx context.Context, what, q string, args, dest []any, row func()) error {
	query := d.s.rdb.QueryContext
	if d.tx != nil {
		query = d.tx.QueryContext
	} else if err := d.s.checkOpen(); err != nil && d.s.adb != nil {
		return err // (a store from OpenReadOnly reads, "closed" to writes)
	}
	rows, err := query(ctx, tracesql.Numbered(q), args...)
	if err != nil {
		return d.s.approvalErr(ctx, what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return d.s.approvalErr(ctx, what, err)
		}
		row()
	}
	if err := rows.Err(); err != nil {
		return d.s.approvalErr(ctx, what, err)
	}
	return nil
}

// Exec runs q in the transaction.
func (d rowDB) Exec(ctx context.Context, what, q string, args ...any) (int64, error) {
	res, err := d.tx.ExecContext(ctx, tracesql.Numbered(q), args...)
	if err != nil {
		return 0, d.s.approvalErr(ctx, what, err)
	}
	return res.RowsAffected()
}

// Tx runs fn in one transaction.
func (d rowDB) Tx(ctx context.Context, what string, fn func(context.Context, tracesql.RowDB) error) error {
	return d.s.approvalTx(ctx, what, func(tx *sql.Tx) error { return fn(ctx, rowDB{d.s, tx}) })
}

// Lock does nothing: the store's changes are serialized.
func (rowDB) Lock(context.Context, tracesql.Lock, string) error { return nil }
