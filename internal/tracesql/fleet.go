package tracesql

import (
	"context"
	"time"

	"github.com/wardenhq/warden/fleet/registry"
)

// Fleet is registry.Rows over DB's tables instances, one row per replica,
// and stream_cursors, one row per cursor name. Each change is a
// transaction of its own; times are unix microseconds (Micro).
type Fleet struct{ DB RowDB }

// PutInstance creates or replaces in.
func (f Fleet) PutInstance(ctx context.Context, in registry.Instance) error {
	_, err := rowExec(ctx, f.DB, "heartbeat", `INSERT INTO instances (id, addr, version, policy_revision, started, last_seen)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, version = excluded.version,
			policy_revision = excluded.policy_revision, started = excluded.started, last_seen = excluded.last_seen`,
		in.ID, in.Addr, in.Version, in.PolicyRevision, Micro(in.Started), Micro(in.LastSeen))
	return err
}

// Instances returns every instance.
func (f Fleet) Instances(ctx context.Context) (out []registry.Instance, err error) {
	var in registry.Instance
	var started, seen int64
	err = f.DB.Query(ctx, "read instances", `SELECT id, addr, version, policy_revision, started, last_seen FROM instances`,
		nil, []any{&in.ID, &in.Addr, &in.Version, &in.PolicyRevision, &started, &seen}, func() {
			in.Started, in.LastSeen = FromMicro(started), FromMicro(seen)
			out = append(out, in)
		})
	return out, err
}

// DeleteInstances drops the instances last seen before cutoff.
func (f Fleet) DeleteInstances(ctx context.Context, cutoff time.Time) (int, error) {
	n, err := rowExec(ctx, f.DB, "forget instances", `DELETE FROM instances WHERE last_seen < $1`, Micro(cutoff))
	return int(n), err
}

// Cursor returns the record id stored under name, "" for none.
func (f Fleet) Cursor(ctx context.Context, name string) (id string, err error) {
	err = f.DB.Query(ctx, "read stream cursor", `SELECT id FROM stream_cursors WHERE name = $1`, []any{name}, []any{&id}, func() {})
	return id, err
}

// PutCursor stores id under name.
func (f Fleet) PutCursor(ctx context.Context, name, id string, at time.Time) error {
	_, err := rowExec(ctx, f.DB, "set stream cursor", `INSERT INTO stream_cursors (name, id, updated) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, updated = excluded.updated`, name, id, Micro(at))
	return err
}
