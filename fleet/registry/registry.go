package registry

import (
	"context"
	"errors"
	"time"
)

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

// MaxField bounds the length of each string field of an Instance a
// store accepts.
const MaxField = 512

// ErrInvalid is returned for an Instance without an ID or with a
// field longer than MaxField.
var ErrInvalid = errors.New("warden: an instance needs an id, and each field at most 512 bytes")

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
