package warden

import (
	"context"
	"errors"
	"time"
)

// CursorStore keeps named positions in the trace beside it: the id of the
// last record a reader (the decision stream's publisher, stream/) has
// handled for good, so that after a restart it continues after that record
// and never handles an older one again. storetest.RunFleet is the contract.
type CursorStore interface {
	// StreamCursor returns the record id stored under name, or "" when
	// none has been stored.
	StreamCursor(ctx context.Context, name string) (string, error)
	// SetStreamCursor stores id under name, durably when it returns,
	// replacing the one before. name and id must not be empty.
	SetStreamCursor(ctx context.Context, name, id string) error
}

// Instance is one warden replica as it registers itself (GET
// /api/instances, CONTRACT §16).
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

// MaxInstanceField bounds the length of each string field of an Instance a
// store accepts.
const MaxInstanceField = 512

// ErrInstanceInvalid is returned for an Instance without an ID or with a
// field longer than MaxInstanceField.
var ErrInstanceInvalid = errors.New("warden: an instance needs an id, and each field at most 512 bytes")

// ValidInstance reports whether a store accepts in.
func ValidInstance(in Instance) error {
	if in.ID == "" {
		return ErrInstanceInvalid
	}
	for _, s := range []string{in.ID, in.Addr, in.Version, in.PolicyRevision} {
		if len(s) > MaxInstanceField {
			return ErrInstanceInvalid
		}
	}
	return nil
}

// InstanceStore is the registry of the replicas sharing a store: each
// upserts its Instance on every heartbeat. storetest.RunFleet is the
// contract.
type InstanceStore interface {
	// Heartbeat stores in, replacing the instance with the same ID
	// (ValidInstance first).
	Heartbeat(ctx context.Context, in Instance) error
	// Instances returns every registered instance, ordered by ID.
	Instances(ctx context.Context) ([]Instance, error)
	// ForgetInstances deletes the instances last seen before cutoff and
	// returns how many it deleted.
	ForgetInstances(ctx context.Context, cutoff time.Time) (int, error)
}

// Readier is a store that can tell cheaply whether it can serve a decision
// now (GET /readyz): nil, or why not.
type Readier interface {
	Ready(ctx context.Context) error
}
