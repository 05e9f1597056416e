package seal

import (
	"context"
	"encoding/hex"
	"errors"
)

// Kind says which level of the hierarchy a key is.
type Kind uint8

const (
	// KindDEK is a period DEK, wrapped by the KEK.
	KindDEK Kind = 1
	// KindSession is a session key, wrapped by its period's DEK.
	KindSession Kind = 2
)

// KeyID names one key among those a reference held over time (8 random
// bytes): a session forgotten and then continued gets a new key with a new
// id, and the values sealed under the old one stay erased.
type KeyID [8]byte

// String is the id in hex.
func (id KeyID) String() string { return hex.EncodeToString(id[:]) }

// KeyRef says what a key seals: a tenant's period (KindDEK, Session "") or
// a tenant's session within a period (KindSession).
type KeyRef struct {
	Kind    Kind
	Tenant  string
	Period  string
	Session string
}

// WrappedKey is a key as a KeyStore keeps it: never in the clear.
type WrappedKey struct {
	KeyRef
	// ID names this key among the reference's keys.
	ID KeyID
	// Parent is, for a session key, the ID of the period DEK that wraps it.
	Parent KeyID
	// KEK is, for a DEK, the ID of the KEK that wraps it.
	KEK string
	// Wrapped is the key wrapped by the KEK (a DEK) or by its period DEK
	// (a session key); nil once Destroyed.
	Wrapped []byte
	// Destroyed marks a tombstone: the key bytes are gone for good.
	Destroyed bool
}

// ErrNoKey is returned by a KeyStore holding no key for what was asked.
var ErrNoKey = errors.New("seal: no such key")

// ErrChanged is returned by KeyStore.Rewrap when the key is no longer the
// one read (destroyed, or rewrapped by someone else).
var ErrChanged = errors.New("seal: key changed meanwhile")

// KeyStore persists wrapped keys. It moves rows; the rules (which key
// wraps which, what destruction means) are the Sealer's. Destroying a key
// must drop its wrapped bytes from the store for good and keep a
// tombstone (reference, id, Destroyed), so a value sealed under it is
// reported erased. Implementations are safe for concurrent use.
type KeyStore interface {
	// Live returns ref's live (not destroyed) key, ErrNoKey when it has
	// none. A reference has at most one live key.
	Live(ctx context.Context, ref KeyRef) (WrappedKey, error)
	// Get returns ref's key id, tombstones included, ErrNoKey when the
	// store never held it.
	Get(ctx context.Context, ref KeyRef, id KeyID) (WrappedKey, error)
	// Add stores k as its reference's live key, unless the reference has
	// a live key already: then it stores nothing and returns that one, so
	// two processes creating a key at once agree on one.
	Add(ctx context.Context, k WrappedKey) (WrappedKey, error)
	// DestroyPeriod destroys tenant's DEK for period and every session
	// key of that period; it returns how many live keys it destroyed.
	DestroyPeriod(ctx context.Context, tenant, period string) (int, error)
	// DestroySession destroys tenant's session keys for session in every
	// period; it returns how many live keys it destroyed.
	DestroySession(ctx context.Context, tenant, session string) (int, error)
	// DEKs returns every live DEK of every tenant (for rotation and
	// retention).
	DEKs(ctx context.Context) ([]WrappedKey, error)
	// Rewrap replaces k's wrapped bytes and KEK id with wrapped and kek,
	// if the store still holds k live with k.Wrapped; else ErrChanged.
	Rewrap(ctx context.Context, k WrappedKey, kek string, wrapped []byte) error
}
