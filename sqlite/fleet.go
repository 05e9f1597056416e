package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
)

// The fleet's small tables (schema 13, schema.go): stream_cursors, the
// decision stream's acknowledged position (audit.CursorStore), and
// instances, the replica registry (registry.Store). Both change a few
// times a second at most, so they are written in plain IMMEDIATE
// transactions on the approvals' connection, like the approvals, never on
// the decision path.

var (
	_ audit.CursorStore = (*Store)(nil)
	_ registry.Store    = (*Store)(nil)
	_ audit.Readier     = (*Store)(nil)
)

// StreamCursor returns the record id stored under name, "" for none.
func (s *Store) StreamCursor(ctx context.Context, name string) (string, error) {
	if err := s.checkOpen(); err != nil {
		return "", err
	}
	var id string
	err := s.rdb.QueryRowContext(ctx, `SELECT id FROM stream_cursors WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", s.readErr(ctx, "read stream cursor", err)
	}
	return id, nil
}

// SetStreamCursor stores id under name, durably when it returns.
func (s *Store) SetStreamCursor(ctx context.Context, name, id string) error {
	if name == "" || id == "" {
		return fmt.Errorf("sqlite: a stream cursor needs a name and a record id")
	}
	return s.approvalTx(ctx, "set stream cursor", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO stream_cursors (name, id, updated) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET id = excluded.id, updated = excluded.updated`,
			name, id, micro(time.Now()))
		if err != nil {
			return s.approvalErr(ctx, "set stream cursor", err)
		}
		return nil
	})
}

// Heartbeat stores in, replacing the instance with its ID.
func (s *Store) Heartbeat(ctx context.Context, in registry.Instance) error {
	if err := registry.Valid(in); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return s.approvalTx(ctx, "heartbeat", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO instances (id, addr, version, policy_revision, started, last_seen)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, version = excluded.version,
				policy_revision = excluded.policy_revision, started = excluded.started, last_seen = excluded.last_seen`,
			in.ID, in.Addr, in.Version, in.PolicyRevision, micro(in.Started), micro(in.LastSeen))
		if err != nil {
			return s.approvalErr(ctx, "heartbeat", err)
		}
		return nil
	})
}

// Instances returns the registered instances, ordered by ID.
func (s *Store) Instances(ctx context.Context) ([]registry.Instance, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT id, addr, version, policy_revision, started, last_seen FROM instances ORDER BY id`)
	if err != nil {
		return nil, s.readErr(ctx, "read instances", err)
	}
	defer rows.Close()
	out := []registry.Instance{}
	for rows.Next() {
		var in registry.Instance
		var started, seen int64
		if err := rows.Scan(&in.ID, &in.Addr, &in.Version, &in.PolicyRevision, &started, &seen); err != nil {
			return nil, s.readErr(ctx, "read instances", err)
		}
		in.Started, in.LastSeen = fromMicro(started), fromMicro(seen)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "read instances", err)
	}
	return out, nil
}

// ForgetInstances deletes the instances last seen before cutoff.
func (s *Store) ForgetInstances(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	err := s.approvalTx(ctx, "forget instances", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM instances WHERE last_seen < ?`, micro(cutoff))
		if err != nil {
			return s.approvalErr(ctx, "forget instances", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// Ready reports whether the store can serve a decision: it is open and its
// database answers a read.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	var one int
	if err := s.rdb.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return s.readErr(ctx, "ready", err)
	}
	return nil
}

// checkOpen is ErrClosed once the store is closed.
func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}
