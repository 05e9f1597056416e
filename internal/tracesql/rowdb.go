package tracesql

import "context"

// RowDB is a SQL store as the statements both stores share for their
// state tables use it (AgBOM, Fleet, ...). The statements are written
// with PostgreSQL's $n parameters (SQLite's are Numbered); the store maps
// the arguments it must and wraps an error with what failed.
type RowDB interface {
	// Query runs q, scans each row it returns into dest, then calls row.
	Query(ctx context.Context, what, q string, args, dest []any, row func()) error
	// Exec runs q in a transaction (Tx) and returns how many rows it
	// changed.
	Exec(ctx context.Context, what, q string, args ...any) (int64, error)
	// Tx runs fn in one transaction, committed when fn returns nil; fn's
	// error is returned as it is.
	Tx(ctx context.Context, what string, fn func(context.Context, RowDB) error) error
	// Lock holds the lock l of key until the transaction ends, on a store
	// several processes write; a store that runs one transaction at a time
	// does nothing.
	Lock(ctx context.Context, l Lock, key string) error
}

// Lock names what RowDB.Lock locks.
type Lock int

// The locks: an agent's AgBOM (the key is tenant/agent), the count of
// agents with one (taken after an agent's, never before), an MCP server's
// tool pins (the key is the server).
const (
	LockAgBOM Lock = iota
	LockAgents
	LockPins
)

// rowExec runs q in a transaction of its own.
func rowExec(ctx context.Context, db RowDB, what, q string, args ...any) (n int64, err error) {
	err = db.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		n, err = db.Exec(ctx, what, q, args...)
		return err
	})
	return n, err
}
