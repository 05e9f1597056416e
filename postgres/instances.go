package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden/fleet/registry"
)

// The replica registry (registry.Store, GET /api/instances) lives in
// instances, one row per replica, upserted by each heartbeat.

var _ registry.Store = (*Store)(nil)

// Heartbeat stores in, replacing the instance with its ID.
func (s *Store) Heartbeat(ctx context.Context, in registry.Instance) error {
	if err := registry.Valid(in); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := s.writable(); err != nil {
		return err
	}
	ctx, cancel := s.fleetCtx(ctx)
	defer cancel()
	_, err := s.statePool().Exec(ctx, `INSERT INTO instances (id, addr, version, policy_revision, started, last_seen)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, version = excluded.version,
			policy_revision = excluded.policy_revision, started = excluded.started, last_seen = excluded.last_seen`,
		in.ID, in.Addr, in.Version, in.PolicyRevision, usOf(in.Started), usOf(in.LastSeen))
	if err != nil {
		return stateErr(ctx, "heartbeat", err)
	}
	return nil
}

// Instances returns the registered instances, ordered by ID.
func (s *Store) Instances(ctx context.Context) ([]registry.Instance, error) {
	ctx, cancel := s.fleetCtx(ctx)
	defer cancel()
	rows, err := s.statePool().Query(ctx,
		`SELECT id, addr, version, policy_revision, started, last_seen FROM instances ORDER BY id`)
	if err != nil {
		return nil, stateErr(ctx, "read instances", err)
	}
	defer rows.Close()
	out := []registry.Instance{}
	for rows.Next() {
		var in registry.Instance
		var started, seen int64
		if err := rows.Scan(&in.ID, &in.Addr, &in.Version, &in.PolicyRevision, &started, &seen); err != nil {
			return nil, stateErr(ctx, "read instances", err)
		}
		in.Started, in.LastSeen = timeOfUS(started), timeOfUS(seen)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, stateErr(ctx, "read instances", err)
	}
	return out, nil
}

// ForgetInstances deletes the instances last seen before cutoff.
func (s *Store) ForgetInstances(ctx context.Context, cutoff time.Time) (int, error) {
	if err := s.writable(); err != nil {
		return 0, err
	}
	ctx, cancel := s.fleetCtx(ctx)
	defer cancel()
	tag, err := s.statePool().Exec(ctx, `DELETE FROM instances WHERE last_seen < $1`, usOf(cutoff))
	if err != nil {
		return 0, stateErr(ctx, "forget instances", err)
	}
	return int(tag.RowsAffected()), nil
}

// usOf is t in unix microseconds, 0 for the zero time.
func usOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// timeOfUS is the time of unix microseconds us, the zero time for 0.
func timeOfUS(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}
