// Package sealtest holds an in-memory seal.KeyStore for tests and the
// contract every KeyStore meets (RunKeyStore). Mem keeps
// nothing across restarts: a program must not seal with it.
package sealtest

import (
	"context"
	"slices"
	"sync"

	"github.com/wardenhq/warden/seal"
)

// Mem is an in-memory seal.KeyStore. The zero value is ready to use.
type Mem struct {
	mu   sync.Mutex
	keys []seal.WrappedKey
}

var _ seal.KeyStore = (*Mem)(nil)

func clone(k seal.WrappedKey) seal.WrappedKey {
	k.Wrapped = slices.Clone(k.Wrapped)
	return k
}

// Live implements seal.KeyStore.
func (m *Mem) Live(_ context.Context, ref seal.KeyRef) (seal.WrappedKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.keys {
		if k.KeyRef == ref && !k.Destroyed {
			return clone(k), nil
		}
	}
	return seal.WrappedKey{}, seal.ErrNoKey
}

// Get implements seal.KeyStore.
func (m *Mem) Get(_ context.Context, ref seal.KeyRef, id seal.KeyID) (seal.WrappedKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.keys {
		if k.KeyRef == ref && k.ID == id {
			return clone(k), nil
		}
	}
	return seal.WrappedKey{}, seal.ErrNoKey
}

// Add implements seal.KeyStore.
func (m *Mem) Add(_ context.Context, k seal.WrappedKey) (seal.WrappedKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.keys {
		if o.KeyRef == k.KeyRef && !o.Destroyed {
			return clone(o), nil
		}
	}
	k = clone(k)
	m.keys = append(m.keys, k)
	return clone(k), nil
}

// destroy destroys every live key match accepts.
func (m *Mem) destroy(match func(seal.WrappedKey) bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for i, k := range m.keys {
		if !k.Destroyed && match(k) {
			clear(m.keys[i].Wrapped)
			m.keys[i].Wrapped, m.keys[i].Destroyed = nil, true
			n++
		}
	}
	return n
}

// DestroyPeriod implements seal.KeyStore.
func (m *Mem) DestroyPeriod(_ context.Context, tenant, period string) (int, error) {
	return m.destroy(func(k seal.WrappedKey) bool { return k.Tenant == tenant && k.Period == period }), nil
}

// DestroySession implements seal.KeyStore.
func (m *Mem) DestroySession(_ context.Context, tenant, session string) (int, error) {
	return m.destroy(func(k seal.WrappedKey) bool {
		return k.Kind == seal.KindSession && k.Tenant == tenant && k.Session == session
	}), nil
}

// DEKs implements seal.KeyStore.
func (m *Mem) DEKs(context.Context) ([]seal.WrappedKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []seal.WrappedKey
	for _, k := range m.keys {
		if k.Kind == seal.KindDEK && !k.Destroyed {
			out = append(out, clone(k))
		}
	}
	return out, nil
}

// Rewrap implements seal.KeyStore.
func (m *Mem) Rewrap(_ context.Context, k seal.WrappedKey, kek string, wrapped []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, o := range m.keys {
		if o.KeyRef == k.KeyRef && o.ID == k.ID && !o.Destroyed && o.KEK == k.KEK && slices.Equal(o.Wrapped, k.Wrapped) {
			m.keys[i].KEK, m.keys[i].Wrapped = kek, slices.Clone(wrapped)
			return nil
		}
	}
	return seal.ErrChanged
}

// Keys returns a copy of every key held, tombstones included (for tests
// that look at what the store keeps).
func (m *Mem) Keys() []seal.WrappedKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]seal.WrappedKey, len(m.keys))
	for i, k := range m.keys {
		out[i] = clone(k)
	}
	return out
}
