package tracesql

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/seal"
)

// SealKeys is seal.KeyStore over DB's table seal_keys, one row per key
// ever stored, keyed by (tenant, period, session, kind, id); session is
// ” for a DEK. A destroyed key keeps its row as a tombstone: wrapped
// NULL, destroyed set (unix microseconds). A partial unique index on the
// reference's columns where destroyed IS NULL holds each reference to one
// live key, so of two Adds at once the second stores nothing (ON CONFLICT
// DO NOTHING) and reads the first's.
type SealKeys struct {
	DB RowDB
	// Erase, when set, runs drop (the statement that NULLs the wrapped
	// bytes) inside a destroy's transaction, so a store can make the
	// bytes it frees be overwritten (SQLite: secure_delete).
	Erase func(ctx context.Context, db RowDB, drop func() (int64, error)) (int64, error)
}

var _ seal.KeyStore = SealKeys{}

// sealCols are the columns a key is read from, in scanKey's order.
const sealCols = `kind, tenant, period, session, id, parent, kek, wrapped, destroyed IS NOT NULL`

// sealRow is a key as scanned.
type sealRow struct {
	k          seal.WrappedKey
	kind       int64
	id, parent []byte
}

func (r *sealRow) dest() []any {
	return []any{&r.kind, &r.k.Tenant, &r.k.Period, &r.k.Session, &r.id, &r.parent, &r.k.KEK, &r.k.Wrapped, &r.k.Destroyed}
}

// key is the row as a WrappedKey (the slices its own).
func (r *sealRow) key() seal.WrappedKey {
	k := r.k
	k.Kind = seal.Kind(r.kind)
	copy(k.ID[:], r.id)
	copy(k.Parent[:], r.parent)
	if k.Wrapped != nil {
		k.Wrapped = append([]byte{}, k.Wrapped...)
	}
	if k.Destroyed {
		k.Wrapped = nil
	}
	return k
}

// one reads the first key q returns, ErrNoKey for none.
func (s SealKeys) one(ctx context.Context, db RowDB, what, q string, args ...any) (seal.WrappedKey, error) {
	var r sealRow
	var out *seal.WrappedKey
	err := db.Query(ctx, what, `SELECT `+sealCols+` FROM seal_keys WHERE `+q, args, r.dest(), func() {
		if out == nil {
			k := r.key()
			out = &k
		}
	})
	if err != nil {
		return seal.WrappedKey{}, err
	}
	if out == nil {
		return seal.WrappedKey{}, seal.ErrNoKey
	}
	return *out, nil
}

const sealLive = `tenant = $1 AND period = $2 AND session = $3 AND kind = $4 AND destroyed IS NULL`

// Live implements seal.KeyStore.
func (s SealKeys) Live(ctx context.Context, ref seal.KeyRef) (seal.WrappedKey, error) {
	return s.one(ctx, s.DB, "read sealing key", sealLive, ref.Tenant, ref.Period, ref.Session, int64(ref.Kind))
}

// Get implements seal.KeyStore.
func (s SealKeys) Get(ctx context.Context, ref seal.KeyRef, id seal.KeyID) (seal.WrappedKey, error) {
	return s.one(ctx, s.DB, "read sealing key", `tenant = $1 AND period = $2 AND session = $3 AND kind = $4 AND id = $5`,
		ref.Tenant, ref.Period, ref.Session, int64(ref.Kind), id[:])
}

// Add implements seal.KeyStore.
func (s SealKeys) Add(ctx context.Context, k seal.WrappedKey) (out seal.WrappedKey, err error) {
	const what = "add sealing key"
	if k.Destroyed || k.Wrapped == nil {
		return seal.WrappedKey{}, errors.New("tracesql: add sealing key: no wrapped bytes")
	}
	err = s.DB.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		if _, err := db.Exec(ctx, what, `INSERT INTO seal_keys (tenant, period, session, kind, id, parent, kek, wrapped, created)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
			k.Tenant, k.Period, k.Session, int64(k.Kind), k.ID[:], k.Parent[:], k.KEK, k.Wrapped, Micro(time.Now())); err != nil {
			return err
		}
		out, err = s.one(ctx, db, what, sealLive, k.Tenant, k.Period, k.Session, int64(k.Kind))
		return err
	})
	return out, err
}

// destroy NULLs the wrapped bytes of the live keys where (with $1 the
// time) and returns how many.
func (s SealKeys) destroy(ctx context.Context, where string, args ...any) (n int64, err error) {
	const what = "destroy sealing keys"
	err = s.DB.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		drop := func() (int64, error) {
			return db.Exec(ctx, what, `UPDATE seal_keys SET wrapped = NULL, destroyed = $1
				WHERE destroyed IS NULL AND `+where, append([]any{Micro(time.Now())}, args...)...)
		}
		if s.Erase != nil {
			n, err = s.Erase(ctx, db, drop)
		} else {
			n, err = drop()
		}
		return err
	})
	return n, err
}

// DestroyPeriod implements seal.KeyStore.
func (s SealKeys) DestroyPeriod(ctx context.Context, tenant, period string) (int, error) {
	n, err := s.destroy(ctx, `tenant = $2 AND period = $3`, tenant, period)
	return int(n), err
}

// DestroySession implements seal.KeyStore.
func (s SealKeys) DestroySession(ctx context.Context, tenant, session string) (int, error) {
	n, err := s.destroy(ctx, `kind = $2 AND tenant = $3 AND session = $4`, int64(seal.KindSession), tenant, session)
	return int(n), err
}

// DEKs implements seal.KeyStore.
func (s SealKeys) DEKs(ctx context.Context) (out []seal.WrappedKey, err error) {
	var r sealRow
	err = s.DB.Query(ctx, "list sealing keys", `SELECT `+sealCols+` FROM seal_keys
		WHERE kind = $1 AND destroyed IS NULL ORDER BY tenant, period`, []any{int64(seal.KindDEK)}, r.dest(), func() {
		out = append(out, r.key())
	})
	return out, err
}

// Rewrap implements seal.KeyStore.
func (s SealKeys) Rewrap(ctx context.Context, k seal.WrappedKey, kek string, wrapped []byte) error {
	n, err := rowExec(ctx, s.DB, "rewrap sealing key", `UPDATE seal_keys SET kek = $1, wrapped = $2
		WHERE tenant = $3 AND period = $4 AND session = $5 AND kind = $6 AND id = $7
			AND destroyed IS NULL AND kek = $8 AND wrapped = $9`,
		kek, wrapped, k.Tenant, k.Period, k.Session, int64(k.Kind), k.ID[:], k.KEK, k.Wrapped)
	if err != nil {
		return err
	}
	if n == 0 {
		return seal.ErrChanged
	}
	return nil
}
