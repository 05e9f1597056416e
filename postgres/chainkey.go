package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wardenhq/warden/internal/tracehash"
)

// The chain key (internal/tracehash, docs/verify.md), as the SQLite
// store's: records are hashed with tracehash.DigestV2 and chained with
// HMAC-SHA256 under the chain key; trace_chain (schema 6) says from which
// seq, under a MAC with the key. Every replica needs the same key.

// queryRower is a pgx.Tx or a pool.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readMarker reads the chain marker; nil when there is none.
func readMarker(ctx context.Context, q queryRower, lock bool) (*tracehash.Marker, error) {
	var m tracehash.Marker
	sql := `SELECT version, anchor_pos, anchor_hash, legacy, key_id, mac FROM trace_chain`
	if lock {
		sql += ` FOR UPDATE`
	}
	err := q.QueryRow(ctx, sql).Scan(&m.Version, &m.AnchorPos, &m.AnchorHash, &m.Legacy, &m.KeyID, &m.MAC)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the chain marker: %w", err)
	}
	return &m, nil
}

// ensureChain checks the database's marker against key, writing it (the
// head now is its anchor) when there is none. It holds the chain head's
// row lock, which every writer takes, so no record is chained meanwhile.
// A database keyed with another key is refused.
func ensureChain(ctx context.Context, pool *pgxpool.Pool, key []byte, where string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("chain marker: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after Commit
	m := &tracehash.Marker{}
	if err := tx.QueryRow(ctx, `SELECT seq, hash FROM trace_head FOR UPDATE`).Scan(&m.AnchorPos, &m.AnchorHash); err != nil {
		return fmt.Errorf("chain marker: read the head: %w", err)
	}
	have, err := readMarker(ctx, tx, true)
	if err != nil {
		return err
	}
	if have != nil {
		if why := have.Check(key); why != "" {
			return fmt.Errorf("%s (chain key from %s): records written now would not verify; give every replica the key the trace was written with (%s)", why, where, tracehash.KeyEnv)
		}
		return nil
	}
	m.Sign(key)
	if _, err := tx.Exec(ctx, `INSERT INTO trace_chain (one, version, anchor_pos, anchor_hash, legacy, key_id, mac)
		VALUES (true, $1, $2, $3, 0, $4, $5)`, m.Version, m.AnchorPos, nonNil(m.AnchorHash), m.KeyID, m.MAC); err != nil {
		return fmt.Errorf("write the chain marker: %w", err)
	}
	return tx.Commit(ctx)
}
