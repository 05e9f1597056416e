package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Instance is one warden replica as it registers itself (GET
// /api/instances, docs/scaling.md).
type Instance struct {
	// ID names the replica: config instance.id, or hostname:port.
	ID string `json:"id"`
	// Addr is the address it serves on, as it was told to listen.
	Addr string `json:"addr"`
	// Version is the warden build it runs.
	Version string `json:"version"`
	// PolicyRevision is the sha256 of its live policy set.
	PolicyRevision string `json:"policy_revision"`
	// Started is when the process started; LastSeen its latest heartbeat.
	Started  time.Time `json:"started"`
	LastSeen time.Time `json:"last_seen"`
}

// MaxField bounds the length of each string field of an Instance a
// store accepts.
const MaxField = 512

// ErrInvalid is returned for an Instance without an ID or with a
// field longer than MaxField.
var ErrInvalid = fmt.Errorf("warden: an instance needs an id, and each field at most %d bytes", MaxField)

// Valid reports whether a store accepts in.
func Valid(in Instance) error {
	if in.ID == "" {
		return ErrInvalid
	}
	for _, s := range []string{in.ID, in.Addr, in.Version, in.PolicyRevision} {
		if len(s) > MaxField {
			return ErrInvalid
		}
	}
	return nil
}

// Store is the registry of the replicas sharing a store: each
// upserts its Instance on every heartbeat. storetest.RunFleet is the
// contract.
type Store interface {
	// Heartbeat stores in, replacing the instance with the same ID
	// (Valid first).
	Heartbeat(ctx context.Context, in Instance) error
	// Instances returns every registered instance, ordered by ID.
	Instances(ctx context.Context) ([]Instance, error)
	// ForgetInstances deletes the instances last seen before cutoff and
	// returns how many it deleted.
	ForgetInstances(ctx context.Context, cutoff time.Time) (int, error)
}

// Rules is the Store of every backend, and its stream cursor store
// (audit.CursorStore) too: the checks, written once above what the backend
// keeps (Rows). Times are kept to the microsecond, in UTC.
type Rules struct{ Rows Rows }

var _ Store = Rules{}

// Rows is what a backend keeps of the registry and the stream cursors:
// rows, which it moves as Rules decides.
type Rows interface {
	// PutInstance creates or replaces in (by ID).
	PutInstance(ctx context.Context, in Instance) error
	// Instances returns every instance, in any order.
	Instances(ctx context.Context) ([]Instance, error)
	// DeleteInstances drops the instances last seen before cutoff and
	// returns how many it dropped.
	DeleteInstances(ctx context.Context, cutoff time.Time) (int, error)
	// Cursor returns the record id stored under name, "" for none.
	Cursor(ctx context.Context, name string) (string, error)
	// PutCursor stores id under name, at the time at.
	PutCursor(ctx context.Context, name, id string, at time.Time) error
}

// Heartbeat stores in, replacing the instance with its ID (Valid first).
func (r Rules) Heartbeat(ctx context.Context, in Instance) error {
	if err := Valid(in); err != nil {
		return err
	}
	in.Started, in.LastSeen = micro(in.Started), micro(in.LastSeen)
	return r.Rows.PutInstance(ctx, in)
}

// Instances returns the registered instances, ordered by ID.
func (r Rules) Instances(ctx context.Context) ([]Instance, error) {
	ins, err := r.Rows.Instances(ctx)
	slices.SortFunc(ins, func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	return ins, err
}

// ForgetInstances deletes the instances last seen before cutoff.
func (r Rules) ForgetInstances(ctx context.Context, cutoff time.Time) (int, error) {
	return r.Rows.DeleteInstances(ctx, micro(cutoff))
}

// StreamCursor returns the record id stored under name, "" for none.
func (r Rules) StreamCursor(ctx context.Context, name string) (string, error) {
	return r.Rows.Cursor(ctx, name)
}

// SetStreamCursor stores id under name, durably when it returns.
func (r Rules) SetStreamCursor(ctx context.Context, name, id string) error {
	if name == "" || id == "" {
		return errors.New("warden: a stream cursor needs a name and a record id")
	}
	return r.Rows.PutCursor(ctx, name, id, time.Now())
}

// micro is t as a store keeps it: to the microsecond, in UTC.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }
