package sqlite

import (
	"context"
	"time"

	"github.com/wardenhq/warden/internal/tracesql"
	"github.com/wardenhq/warden/seal"
)

// The sealing keys (schema 16, schema.go) are kept by the statements
// shared with PostgreSQL (tracesql.SealKeys), in plain transactions on the
// approvals' connection, never on the decision path: a Sealer caches the
// keys it unwrapped.
//
// Destroying a key must leave its wrapped bytes nowhere in the files. The
// UPDATE that NULLs them runs with PRAGMA secure_delete on, so SQLite
// overwrites the freed space of the row with zeros in the page it writes
// (to the WAL); then a TRUNCATE checkpoint copies that page into the
// database file and empties the WAL, whose older frames still hold the
// page as it was. A reader holding an old snapshot can keep the
// checkpoint from finishing: the WAL then keeps those frames until the
// checkpointer's next finished checkpoint restarts it (checkpoint.go).
// Destroying is rare (a session forgotten, a period expired), so the
// checkpoint's stall of the writer, a few milliseconds, is not on the
// decision path's budget. TestSealKeysDestroyedBytesGone reads the files
// after a destroy.

// SealKeys returns the store's seal.KeyStore.
func (s *Store) SealKeys() seal.KeyStore {
	return sealKeys{SealKeys: tracesql.SealKeys{DB: rowDB{s: s}, Erase: secureDelete}, s: s}
}

// sealKeys is tracesql.SealKeys with the WAL emptied after a destroy.
type sealKeys struct {
	tracesql.SealKeys
	s *Store
}

// DestroyPeriod implements seal.KeyStore.
func (k sealKeys) DestroyPeriod(ctx context.Context, tenant, period string) (int, error) {
	n, err := k.SealKeys.DestroyPeriod(ctx, tenant, period)
	return n, k.s.truncateWAL(ctx, n, err)
}

// DestroySession implements seal.KeyStore.
func (k sealKeys) DestroySession(ctx context.Context, tenant, session string) (int, error) {
	n, err := k.SealKeys.DestroySession(ctx, tenant, session)
	return n, k.s.truncateWAL(ctx, n, err)
}

// truncateWAL runs a TRUNCATE checkpoint after n keys were destroyed
// (none: nothing to do; err: returned as it is). The store's own
// checkpointer, or a reader, may keep it from running (busy): it is tried
// again every truncateRetry for up to truncateWait. One that never
// finishes is not an error: the keys are destroyed, and the WAL's old
// frames go at the next finished checkpoint.
func (s *Store) truncateWAL(ctx context.Context, n int, err error) error {
	if err != nil || n == 0 {
		return err
	}
	for waited := time.Duration(0); ; waited += truncateRetry {
		if err := s.checkOpen(); err != nil {
			return err
		}
		var busy, logFrames, done int64
		if err := s.adb.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
			return s.approvalErr(ctx, "checkpoint after destroying sealing keys", err)
		}
		if busy == 0 || waited >= truncateWait {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(truncateRetry):
		}
	}
}

// truncateRetry and truncateWait pace truncateWAL's attempts.
const (
	truncateRetry = 20 * time.Millisecond
	truncateWait  = 2 * time.Second
)

// secureDelete runs drop with PRAGMA secure_delete on, then sets it back
// as it was on the connection.
func secureDelete(ctx context.Context, db tracesql.RowDB, drop func() (int64, error)) (int64, error) {
	const what = "destroy sealing keys"
	var was int64
	if err := db.Query(ctx, what, `PRAGMA secure_delete`, nil, []any{&was}, func() {}); err != nil {
		return 0, err
	}
	if _, err := db.Exec(ctx, what, `PRAGMA secure_delete = 1`); err != nil {
		return 0, err
	}
	n, err := drop()
	if was != 1 {
		if _, rerr := db.Exec(ctx, what, `PRAGMA secure_delete = 0`); err == nil {
			err = rerr
		}
	}
	return n, err
}
