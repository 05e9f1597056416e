package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/jackc/pgx/v5"
)

// The decision stream's acknowledged position (audit.CursorStore) lives in
// stream_cursors, one row per cursor name. The replicas of a fleet share
// it: stream.Publisher's lease makes one of them publish at a time, and the
// one that takes over continues from the cursor the other stored.

var _ audit.CursorStore = (*Store)(nil)

// StreamCursor returns the record id stored under name, "" for none.
func (s *Store) StreamCursor(ctx context.Context, name string) (string, error) {
	ctx, cancel := s.fleetCtx(ctx)
	defer cancel()
	var id string
	err := s.statePool().QueryRow(ctx, `SELECT id FROM stream_cursors WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", stateErr(ctx, "read stream cursor", err)
	}
	return id, nil
}

// SetStreamCursor stores id under name; committed when it returns.
func (s *Store) SetStreamCursor(ctx context.Context, name, id string) error {
	if name == "" || id == "" {
		return fmt.Errorf("postgres: a stream cursor needs a name and a record id")
	}
	if err := s.writable(); err != nil {
		return err
	}
	ctx, cancel := s.fleetCtx(ctx)
	defer cancel()
	_, err := s.statePool().Exec(ctx, `INSERT INTO stream_cursors (name, id, updated) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, updated = excluded.updated`,
		name, id, time.Now().UnixMicro())
	if err != nil {
		return stateErr(ctx, "set stream cursor", err)
	}
	return nil
}

// fleetCtx bounds one cursor or registry call by the store's Timeout (at
// least fleetTimeout) when ctx has no earlier deadline, so PostgreSQL
// unreachable fails the call instead of hanging the publisher or the
// heartbeat.
func (s *Store) fleetCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, max(s.opts.Timeout, fleetTimeout))
}

// fleetTimeout is the least bound of fleetCtx.
const fleetTimeout = 2 * time.Second
