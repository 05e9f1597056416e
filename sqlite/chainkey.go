package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/tracehash"
)

// The chain key (internal/tracehash, docs/verify.md): every record written
// by this package is hashed with tracehash.DigestV2 and chained with
// HMAC-SHA256 under the chain key, which is not in the data directory (by
// default $XDG_CONFIG_HOME/warden/trace.chain.key, or the file
// $WARDEN_TRACE_KEY_FILE names; Options.ChainKey, Options.ChainKeyFile).
// The trace's marker (trace_chain, schema 15) says where the keyed records
// start and how many unhashed ones the trace may start with, under a MAC
// with the key.

// readMarker reads the trace's chain marker; nil when it has none.
func readMarker(ctx context.Context, q queryer) (*tracehash.Marker, error) {
	var m tracehash.Marker
	err := q.QueryRowContext(ctx, `SELECT version, anchor_pos, anchor_hash, legacy, key_id, mac FROM trace_chain`).Scan(
		&m.Version, &m.AnchorPos, &m.AnchorHash, &m.Legacy, &m.KeyID, &m.MAC)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: read the chain marker: %w", err)
	}
	return &m, nil
}

// ensureChain checks the trace's marker against key, writing it when the
// trace has none (a new trace, or one written before the chain key): the
// chain's head now is its anchor, the records after it are keyed. A trace
// keyed with another key is refused: its chain could not go on.
func ensureChain(ctx context.Context, db *sql.DB, key []byte, where string) error {
	tx, err := db.BeginTx(ctx, nil) // IMMEDIATE (the DSN's _txlock): the head cannot move meanwhile
	if err != nil {
		return fmt.Errorf("sqlite: chain marker: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	m, err := readMarker(ctx, tx)
	if err != nil {
		return err
	}
	if m != nil {
		if why := m.Check(key); why != "" {
			return fmt.Errorf("sqlite: %s (chain key from %s): records written now would not verify; open it with the key it was written with (%s)", why, where, tracehash.KeyEnv)
		}
		return nil
	}
	m = &tracehash.Marker{}
	// The head as the writer reads it: the newest row's hash, else the
	// newest checkpoint's.
	var h []byte
	err = tx.QueryRowContext(ctx, `SELECT rowid, hash FROM runs ORDER BY rowid DESC LIMIT 1`).Scan(&m.AnchorPos, &h)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var last string
		err = tx.QueryRowContext(ctx, `SELECT last_rowid, last_hash FROM trace_checkpoints ORDER BY rowid DESC LIMIT 1`).Scan(&m.AnchorPos, &last)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		} else if err == nil {
			var ok bool
			if h, ok = decodeHash(last); !ok {
				return fmt.Errorf("sqlite: chain marker: checkpoint hash %q is not a SHA-256 hash", last)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("sqlite: chain marker: read the head: %w", err)
	}
	m.AnchorHash = h
	// The records from before the hash chain (schema 6 and older) the
	// trace starts with; none once a checkpoint has cut hashed ones.
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE hash = x''
		AND rowid < coalesce((SELECT min(rowid) FROM runs WHERE hash <> x''), 9223372036854775807)
		AND NOT EXISTS (SELECT 1 FROM trace_checkpoints WHERE last_hash <> '')`).Scan(&m.Legacy); err != nil {
		return fmt.Errorf("sqlite: chain marker: count the unhashed records: %w", err)
	}
	m.Sign(key)
	if _, err := tx.ExecContext(ctx, `INSERT INTO trace_chain (one, version, anchor_pos, anchor_hash, legacy, key_id, mac)
		VALUES (1, ?, ?, ?, ?, ?, ?)`, m.Version, m.AnchorPos, nonNilBytes(m.AnchorHash), m.Legacy, m.KeyID, m.MAC); err != nil {
		return fmt.Errorf("sqlite: write the chain marker: %w", err)
	}
	return tx.Commit()
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
