// Package backend is what a trace store offers besides the trace: a
// Backend is the trace and the features kept beside it (approvals,
// sessions' labels, ACS sessions, AgBOMs, the fleet's registry and
// cursors, readiness, pruning, sealed values' keys), each nil when the store does not keep it.
// A Backend is opened from a URL by the driver registered for its scheme,
// as database/sql opens a database: package sqlite registers "sqlite" (and
// a bare directory path), package postgres "postgres" and "postgresql". A
// program links a backend by importing its package, for its side effect
// if it uses nothing else of it:
//
//	import _ "github.com/wardenhq/warden/sqlite"
//
// and links no other: a Go agent that embeds the Guardian with SQLite does
// not link the PostgreSQL driver.
package backend

import (
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"
	"github.com/wardenhq/warden/labels"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/sigkey"
)

// Backend is a trace store and the features it keeps. A nil feature is
// one the store does not keep; a caller that needs it says so (ACS without
// ACS sessions is an error) or does without (labels then live in memory).
// Closing Trace closes the Backend.
type Backend struct {
	// Name names the backend in messages: "SQLite", "PostgreSQL".
	Name string
	// Trace records every decision; never nil in a Backend a driver opened.
	Trace audit.Store

	Approvals approval.ApprovalStore // approvals that outlive a request
	Labels    labels.Store           // sessions' labels
	ACS       acsstate.Store         // ACS sessions and their chains
	AgBOM     agbom.Store            // agents' AgBOMs and tool pins
	Registry  registry.Store         // the fleet's instance registry
	Cursors   audit.CursorStore      // the decision stream's positions
	Ready     audit.Readier          // GET /readyz's check; nil: ready while open
	Pruner    Pruner                 // trace.retention and trace.max_size
	Seal      seal.KeyStore          // sealed values' keys; nil: not kept

	// Dir is the backend's data directory, where the redaction key
	// (trace.key) lives; "" for a backend without one (PostgreSQL), whose
	// key is in the directory its user gives (guardian.Options.KeyDir).
	Dir string
	// Redact says the records are kept where they outlive the process (a
	// file, a database), so a Guardian redacts them (package redact)
	// unless trace.raw_input or a RecordFilter of its own says otherwise.
	Redact bool
	// Shared says other processes write the same state (replicas of a
	// fleet sharing one database): what one replica wrote a moment ago
	// must count at the next step of another, so state such as a session's
	// labels is read from the store at each step rather than cached, and
	// the decision stream is published by one replica at a time, under a
	// lease.
	Shared bool
}

// Close closes the backend (its Trace).
func (b *Backend) Close() error { return b.Trace.Close() }

// Pruner prunes the trace in the background (SQLite: sqlite.Store.StartPruning).
type Pruner interface {
	// StartPruning prunes the trace by r, a pass now and then one every
	// interval, until the backend is closed; it does nothing when r
	// prunes nothing or pruning has started already. Errors of a pass go
	// to onErr (if not nil) and the next pass tries again.
	StartPruning(r Retention, onErr func(error)) error
}

// Retention says which records the trace keeps (the config's trace:
// section).
type Retention struct {
	// MaxAge: records older than this are pruned (0: no age limit).
	MaxAge time.Duration
	// MaxSize: the oldest records are pruned while the trace is larger (0:
	// no size limit).
	MaxSize int64
	// SigningKey, when set (acs.signing_key), signs the checkpoints that
	// keep a pruned trace verifiable, in place of the backend's own key.
	SigningKey *sigkey.PrivateKey
}

// Options say how Open opens a backend. The zero value opens it for
// reading and writing with the driver's defaults.
type Options struct {
	// ReadOnly opens the trace for reading only (`warden runs`): Record
	// fails, and nothing is migrated.
	ReadOnly bool
	// OnBatch, if set, is told of each batch the trace's writer commits:
	// its size, how long it took and its error. It must not block.
	OnBatch func(size int, dur time.Duration, err error)
	// TraceLog makes a SQLite trace's segment log each record's durable
	// point (sqlite.Options.Log); other backends ignore it.
	TraceLog bool
}

// Provider is a store that knows its Backend: a store a driver opened
// (*sqlite.Store, *postgres.Store).
type Provider interface {
	audit.Store
	Backend() *Backend
}

// Of returns the Backend of store: the one it provides (Provider), else
// store as the trace with the features its methods implement (a store
// made in memory, storetest.Mem), none of them shared or redacted. Of(nil)
// is the Backend of no trace, with no features.
func Of(store audit.Store) *Backend {
	if store == nil {
		return &Backend{}
	}
	if p, ok := store.(Provider); ok {
		return p.Backend()
	}
	b := &Backend{Trace: store}
	b.Approvals, _ = store.(approval.ApprovalStore)
	b.Labels, _ = store.(labels.Store)
	b.ACS, _ = store.(acsstate.Store)
	b.AgBOM, _ = store.(agbom.Store)
	b.Registry, _ = store.(registry.Store)
	b.Cursors, _ = store.(audit.CursorStore)
	b.Ready, _ = store.(audit.Readier)
	b.Seal, _ = store.(seal.KeyStore)
	return b
}
