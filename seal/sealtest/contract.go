package sealtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/wardenhq/warden/seal"
)

// RunKeyStore runs the seal.KeyStore contract as subtests of t. open must
// return a new, empty store for each subtest (and should register a
// t.Cleanup that closes it). The contract is the interface's
// documentation:
//
//   - Live and Get of a key never stored are seal.ErrNoKey;
//   - Add stores a key as its reference's live key; a reference is a kind,
//     tenant, period and session (the empty tenant included), and keys of
//     other references are independent;
//   - first writer wins: Add for a reference with a live key stores
//     nothing and returns that key, also with 16 goroutines adding at
//     once (they all get the same key);
//   - DestroyPeriod destroys a tenant's DEK of a period and that period's
//     session keys, no other tenant's or period's; DestroySession
//     destroys a tenant's session keys of one session in every period,
//     no DEK; both count the live keys they destroyed (0 the second time);
//   - a destroyed key is a tombstone: Live is seal.ErrNoKey, Get returns
//     it Destroyed, with its reference and id and no wrapped bytes; a new
//     key can then be added for the reference;
//   - DEKs lists every tenant's live DEKs and nothing else;
//   - Rewrap replaces a live key's KEK id and wrapped bytes when the
//     caller's copy is current, else returns seal.ErrChanged (stale bytes,
//     stale KEK, destroyed, unknown); of 8 goroutines rewrapping one copy
//     at once, exactly one succeeds;
//   - keys go in and come out by value: changing a slice passed to Add or
//     returned by Live changes nothing stored.
func RunKeyStore(t *testing.T, open func(t *testing.T) seal.KeyStore) {
	t.Helper()
	for _, tc := range keyStoreCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &ksCheck{T: t, s: open(t)})
		})
	}
}

// ksCheck is a store under test with helpers that fail the test.
type ksCheck struct {
	*testing.T
	s seal.KeyStore
	n byte // for fresh ids and bytes
}

var ctx = context.Background()

// dek and session make references.
func dek(tenant, period string) seal.KeyRef {
	return seal.KeyRef{Kind: seal.KindDEK, Tenant: tenant, Period: period}
}

func session(tenant, period, sess string) seal.KeyRef {
	return seal.KeyRef{Kind: seal.KindSession, Tenant: tenant, Period: period, Session: sess}
}

// key makes a new key for ref, with a fresh id and wrapped bytes.
func (c *ksCheck) key(ref seal.KeyRef) seal.WrappedKey {
	c.n++
	k := seal.WrappedKey{KeyRef: ref, Wrapped: bytes.Repeat([]byte{c.n, 0xA5}, 24)}
	k.ID[0], k.ID[7] = c.n, 0x5A
	if ref.Kind == seal.KindDEK {
		k.KEK = fmt.Sprintf("kek-%d", c.n)
	} else {
		k.Parent[0], k.Parent[1] = c.n, 0x11
	}
	return k
}

// add adds k and fails unless the store returns want.
func (c *ksCheck) add(k, want seal.WrappedKey) {
	c.Helper()
	got, err := c.s.Add(ctx, k)
	if err != nil {
		c.Fatalf("Add(%v %s): %v", k.KeyRef, k.ID, err)
	}
	c.same("Add", got, want)
}

// live fails unless ref's live key is want.
func (c *ksCheck) live(ref seal.KeyRef, want seal.WrappedKey) {
	c.Helper()
	got, err := c.s.Live(ctx, ref)
	if err != nil {
		c.Fatalf("Live(%v): %v, want key %s", ref, err, want.ID)
	}
	c.same("Live", got, want)
}

// none fails unless ref has no live key.
func (c *ksCheck) none(ref seal.KeyRef) {
	c.Helper()
	if got, err := c.s.Live(ctx, ref); !errors.Is(err, seal.ErrNoKey) {
		c.Fatalf("Live(%v) = key %s, %v; want ErrNoKey", ref, got.ID, err)
	}
}

// get fails unless Get of want's reference and id is want.
func (c *ksCheck) get(want seal.WrappedKey) {
	c.Helper()
	got, err := c.s.Get(ctx, want.KeyRef, want.ID)
	if err != nil {
		c.Fatalf("Get(%v, %s): %v", want.KeyRef, want.ID, err)
	}
	c.same("Get", got, want)
}

// tomb fails unless k is a tombstone: destroyed, its wrapped bytes gone.
func (c *ksCheck) tomb(k seal.WrappedKey) {
	c.Helper()
	got, err := c.s.Get(ctx, k.KeyRef, k.ID)
	if err != nil {
		c.Fatalf("Get(%v, %s) of a destroyed key: %v, want its tombstone", k.KeyRef, k.ID, err)
	}
	if !got.Destroyed || got.Wrapped != nil || got.KeyRef != k.KeyRef || got.ID != k.ID {
		c.Fatalf("Get(%v, %s) of a destroyed key = %+v; want Destroyed, Wrapped nil, same reference and id", k.KeyRef, k.ID, got)
	}
	c.none(k.KeyRef)
}

func (c *ksCheck) same(op string, got, want seal.WrappedKey) {
	c.Helper()
	if got.KeyRef != want.KeyRef || got.ID != want.ID || got.Parent != want.Parent || got.KEK != want.KEK ||
		!bytes.Equal(got.Wrapped, want.Wrapped) || got.Destroyed != want.Destroyed {
		c.Fatalf("%s = %+v; want %+v", op, got, want)
	}
}

func (c *ksCheck) destroyed(op string, n int, err error, want int) {
	c.Helper()
	if err != nil || n != want {
		c.Fatalf("%s = %d, %v; want %d", op, n, err, want)
	}
}

// destroys stores gone and kept, runs destroy, and checks that it
// destroyed exactly gone (tombstones) and kept the rest live; run again it
// destroys nothing and gone stays tombstones.
func (c *ksCheck) destroys(op string, gone, kept []seal.WrappedKey, destroy func() (int, error)) {
	c.Helper()
	for _, k := range append(append([]seal.WrappedKey{}, gone...), kept...) {
		c.add(k, k)
	}
	n, err := destroy()
	c.destroyed(op, n, err, len(gone))
	for _, k := range gone {
		c.tomb(k)
	}
	for _, k := range kept {
		c.live(k.KeyRef, k)
	}
	n, err = destroy()
	c.destroyed(op+" again", n, err, 0)
	for _, k := range gone {
		c.tomb(k)
	}
}

var keyStoreCases = []struct {
	name string
	run  func(t *testing.T, c *ksCheck)
}{
	{"empty store has no key", func(t *testing.T, c *ksCheck) {
		c.none(dek("t1", "2026-05"))
		c.none(session("t1", "2026-05", "s1"))
		if _, err := c.s.Get(ctx, dek("t1", "2026-05"), seal.KeyID{1}); !errors.Is(err, seal.ErrNoKey) {
			t.Fatalf("Get of a key never stored: %v, want ErrNoKey", err)
		}
		if deks, err := c.s.DEKs(ctx); err != nil || len(deks) != 0 {
			t.Fatalf("DEKs of an empty store = %v, %v", deks, err)
		}
		for _, op := range []struct {
			name string
			fn   func() (int, error)
		}{
			{"DestroyPeriod", func() (int, error) { return c.s.DestroyPeriod(ctx, "t1", "2026-05") }},
			{"DestroySession", func() (int, error) { return c.s.DestroySession(ctx, "t1", "s1") }},
		} {
			n, err := op.fn()
			c.destroyed(op.name+" of nothing", n, err, 0)
		}
	}},
	{"add then live and get", func(t *testing.T, c *ksCheck) {
		d := c.key(dek("t1", "2026-05"))
		s := c.key(session("t1", "2026-05", "s1"))
		s.Parent = d.ID
		c.add(d, d)
		c.add(s, s)
		c.live(d.KeyRef, d)
		c.live(s.KeyRef, s)
		c.get(d)
		c.get(s)
		if _, err := c.s.Get(ctx, d.KeyRef, s.ID); !errors.Is(err, seal.ErrNoKey) {
			t.Fatalf("Get of another reference's id: %v, want ErrNoKey", err)
		}
	}},
	{"references are independent", func(t *testing.T, c *ksCheck) {
		refs := []seal.KeyRef{
			dek("t1", "2026-05"), dek("t1", "2026-06"), dek("t2", "2026-05"), dek("", "2026-05"),
			session("t1", "2026-05", "s1"), session("t1", "2026-05", "s2"), session("t1", "2026-06", "s1"),
			session("t2", "2026-05", "s1"), session("", "2026-05", "s1"),
		}
		keys := make([]seal.WrappedKey, len(refs))
		for i, r := range refs {
			keys[i] = c.key(r)
			c.add(keys[i], keys[i])
		}
		for _, k := range keys {
			c.live(k.KeyRef, k)
		}
	}},
	{"first writer wins", func(t *testing.T, c *ksCheck) {
		first, second := c.key(dek("t1", "2026-05")), c.key(dek("t1", "2026-05"))
		c.add(first, first)
		c.add(second, first)
		c.live(first.KeyRef, first)
		if _, err := c.s.Get(ctx, second.KeyRef, second.ID); !errors.Is(err, seal.ErrNoKey) {
			t.Fatalf("Get of the key a second Add lost: %v, want ErrNoKey", err)
		}
	}},
	{"first writer wins under concurrency", func(t *testing.T, c *ksCheck) {
		ref := session("t1", "2026-05", "s1")
		keys := make([]seal.WrappedKey, 16)
		for i := range keys {
			keys[i] = c.key(ref)
		}
		got := make([]seal.WrappedKey, len(keys))
		errs := make([]error, len(keys))
		var wg sync.WaitGroup
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = c.s.Add(ctx, keys[i])
			}()
		}
		wg.Wait()
		for i := range keys {
			if errs[i] != nil {
				t.Fatalf("Add %d: %v", i, errs[i])
			}
			if got[i].ID != got[0].ID {
				t.Fatalf("concurrent Adds returned keys %s and %s: want one", got[0].ID, got[i].ID)
			}
		}
		winner := -1
		for i, k := range keys {
			if k.ID == got[0].ID {
				winner = i
			} else if _, err := c.s.Get(ctx, ref, k.ID); !errors.Is(err, seal.ErrNoKey) {
				t.Fatalf("Get of a losing Add's key: %v, want ErrNoKey", err)
			}
		}
		if winner < 0 {
			t.Fatalf("Add returned %s, none of the keys added", got[0].ID)
		}
		c.live(ref, keys[winner])
	}},
	{"DestroyPeriod destroys the period's DEK and session keys", func(t *testing.T, c *ksCheck) {
		gone := []seal.WrappedKey{c.key(dek("t1", "2026-05")), c.key(session("t1", "2026-05", "s1")), c.key(session("t1", "2026-05", "s2"))}
		kept := []seal.WrappedKey{c.key(dek("t1", "2026-06")), c.key(session("t1", "2026-06", "s1")),
			c.key(dek("t2", "2026-05")), c.key(session("t2", "2026-05", "s1"))}
		c.destroys("DestroyPeriod", gone, kept, func() (int, error) { return c.s.DestroyPeriod(ctx, "t1", "2026-05") })
	}},
	{"DestroySession destroys the session in every period", func(t *testing.T, c *ksCheck) {
		gone := []seal.WrappedKey{c.key(session("t1", "2026-05", "s1")), c.key(session("t1", "2026-06", "s1"))}
		kept := []seal.WrappedKey{c.key(dek("t1", "2026-05")), c.key(dek("t1", "2026-06")),
			c.key(session("t1", "2026-05", "s2")), c.key(session("t2", "2026-05", "s1"))}
		c.destroys("DestroySession", gone, kept, func() (int, error) { return c.s.DestroySession(ctx, "t1", "s1") })
	}},
	{"a destroyed reference takes a new key", func(t *testing.T, c *ksCheck) {
		old := c.key(session("t1", "2026-05", "s1"))
		c.add(old, old)
		n, err := c.s.DestroySession(ctx, "t1", "s1")
		c.destroyed("DestroySession", n, err, 1)
		fresh := c.key(old.KeyRef)
		c.add(fresh, fresh)
		c.live(old.KeyRef, fresh)
		c.get(fresh)
		got, err := c.s.Get(ctx, old.KeyRef, old.ID)
		if err != nil || !got.Destroyed || got.Wrapped != nil {
			t.Fatalf("Get of the old key after a new one = %+v, %v; want its tombstone", got, err)
		}
		n, err = c.s.DestroySession(ctx, "t1", "s1")
		c.destroyed("DestroySession of the new key", n, err, 1)
		c.tomb(fresh)
	}},
	{"DEKs lists only live DEKs", func(t *testing.T, c *ksCheck) {
		want := map[seal.KeyID]seal.WrappedKey{}
		for _, r := range []seal.KeyRef{dek("t1", "2026-06"), dek("t2", "2026-05"), dek("", "2026-05")} {
			k := c.key(r)
			c.add(k, k)
			want[k.ID] = k
		}
		for _, k := range []seal.WrappedKey{c.key(dek("t1", "2026-05")), c.key(session("t1", "2026-06", "s1"))} {
			c.add(k, k)
		}
		n, err := c.s.DestroyPeriod(ctx, "t1", "2026-05")
		c.destroyed("DestroyPeriod", n, err, 1)
		deks, err := c.s.DEKs(ctx)
		if err != nil {
			t.Fatalf("DEKs: %v", err)
		}
		if len(deks) != len(want) {
			t.Fatalf("DEKs = %d keys %+v; want %d", len(deks), deks, len(want))
		}
		for _, k := range deks {
			w, ok := want[k.ID]
			if !ok {
				t.Fatalf("DEKs lists %+v, not a live DEK", k)
			}
			c.same("DEKs", k, w)
		}
	}},
	{"Rewrap replaces a current key", func(t *testing.T, c *ksCheck) {
		k := c.key(dek("t1", "2026-05"))
		c.add(k, k)
		next := k
		next.KEK, next.Wrapped = "kek-new", []byte("rewrapped under the new KEK, 40 bytes..")
		if err := c.s.Rewrap(ctx, k, next.KEK, next.Wrapped); err != nil {
			t.Fatalf("Rewrap: %v", err)
		}
		c.live(k.KeyRef, next)
		c.get(next)
		// The copy read before is stale now.
		if err := c.s.Rewrap(ctx, k, "kek-other", []byte("x")); !errors.Is(err, seal.ErrChanged) {
			t.Fatalf("Rewrap of a stale copy: %v, want ErrChanged", err)
		}
		c.live(k.KeyRef, next)
	}},
	{"Rewrap of a changed key is ErrChanged", func(t *testing.T, c *ksCheck) {
		k := c.key(dek("t1", "2026-05"))
		c.add(k, k)
		staleBytes, staleKEK, unknown := k, k, k
		staleBytes.Wrapped = append([]byte{}, k.Wrapped...)
		staleBytes.Wrapped[0] ^= 1
		staleKEK.KEK = "kek-before"
		unknown.ID[3] ^= 1
		for _, tc := range []struct {
			name string
			k    seal.WrappedKey
		}{{"stale bytes", staleBytes}, {"stale KEK", staleKEK}, {"unknown id", unknown}, {"unknown reference", c.key(dek("t1", "2026-07"))}} {
			if err := c.s.Rewrap(ctx, tc.k, "kek-new", []byte("new")); !errors.Is(err, seal.ErrChanged) {
				t.Fatalf("Rewrap (%s): %v, want ErrChanged", tc.name, err)
			}
		}
		c.live(k.KeyRef, k)
		n, err := c.s.DestroyPeriod(ctx, "t1", "2026-05")
		c.destroyed("DestroyPeriod", n, err, 1)
		if err := c.s.Rewrap(ctx, k, "kek-new", []byte("new")); !errors.Is(err, seal.ErrChanged) {
			t.Fatalf("Rewrap of a destroyed key: %v, want ErrChanged", err)
		}
		c.tomb(k)
	}},
	{"Rewrap is compare-and-swap under concurrency", func(t *testing.T, c *ksCheck) {
		k := c.key(dek("t1", "2026-05"))
		c.add(k, k)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.s.Rewrap(ctx, k, fmt.Sprintf("kek-%d", i), bytes.Repeat([]byte{byte(i)}, 40))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("Rewraps %d and %d of one copy both succeeded", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, seal.ErrChanged):
				t.Fatalf("Rewrap %d: %v, want nil or ErrChanged", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no Rewrap of a current copy succeeded")
		}
		want := k
		want.KEK, want.Wrapped = fmt.Sprintf("kek-%d", won), bytes.Repeat([]byte{byte(won)}, 40)
		c.live(k.KeyRef, want)
	}},
	{"keys are stored by value", func(t *testing.T, c *ksCheck) {
		k := c.key(dek("t1", "2026-05"))
		in := k
		in.Wrapped = append([]byte{}, k.Wrapped...)
		if _, err := c.s.Add(ctx, in); err != nil {
			t.Fatalf("Add: %v", err)
		}
		in.Wrapped[0] ^= 0xFF
		got, err := c.s.Live(ctx, k.KeyRef)
		if err != nil {
			t.Fatalf("Live: %v", err)
		}
		got.Wrapped[1] ^= 0xFF
		c.live(k.KeyRef, k)
	}},
}
