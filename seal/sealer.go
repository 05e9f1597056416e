package seal

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrErased is returned by Open for a value whose session key or
	// period DEK was destroyed: the original is gone for good.
	ErrErased = errors.New("seal: erased (its key was destroyed)")
	// ErrWrongTenant is returned by Open for a value sealed for another
	// tenant than the one asking.
	ErrWrongTenant = errors.New("seal: sealed for another tenant")
	// ErrTampered is returned by Open for a value that does not
	// authenticate: altered, or bound to other additional data (another
	// record or field) than the one given.
	ErrTampered = errors.New("seal: does not open (altered, or sealed for another record)")
	// ErrUnknownKey is returned by Open for a value naming a key the key
	// store never held (altered, or sealed with another key store).
	ErrUnknownKey = errors.New("seal: sealed under a key this key store never held")
	// ErrWrongKEK is returned when a DEK is wrapped by another KEK than
	// the one given (a rotation not finished, or the wrong key file).
	ErrWrongKEK = errors.New("seal: DEK wrapped by another KEK")
)

// Options configure a Sealer.
type Options struct {
	// KEK wraps the period DEKs. Required.
	KEK KEK
	// Store persists the wrapped keys. Required.
	Store KeyStore
	// Granularity is the length of a period (default Month).
	Granularity Granularity
	// CacheKeys bounds the unwrapped keys kept in memory (0:
	// DefaultKeyCache; negative: none).
	CacheKeys int
	// CacheTTL is how long an unwrapped key is kept (0: DefaultKeyTTL).
	CacheTTL time.Duration
}

// Sealer seals and opens values under the key hierarchy (see the package
// doc). It is safe for concurrent use.
type Sealer struct {
	kek   KEK
	store KeyStore
	gran  Granularity
	cache *keyCache
}

// New returns a Sealer.
func New(o Options) (*Sealer, error) {
	if o.KEK == nil || o.Store == nil {
		return nil, errors.New("seal: a Sealer needs a KEK and a key store")
	}
	n, ttl := o.CacheKeys, o.CacheTTL
	if n == 0 {
		n = DefaultKeyCache
	}
	if ttl <= 0 {
		ttl = DefaultKeyTTL
	}
	return &Sealer{kek: o.KEK, store: o.Store, gran: o.Granularity, cache: newKeyCache(n, ttl)}, nil
}

// Seal seals plaintext for tenant's session at time t (its period is
// t's) and binds it to aad, which Open must be given again: name the
// record and the field the value belongs to. The first value of a period
// or session creates its key.
func (s *Sealer) Seal(ctx context.Context, tenant, session string, t time.Time, plaintext, aad []byte) ([]byte, error) {
	if tenant == "" || len(tenant) > maxName || len(session) > maxName {
		return nil, fmt.Errorf("seal: tenant must be 1..%d bytes and session at most %d", maxName, maxName)
	}
	ref := KeyRef{Kind: KindSession, Tenant: tenant, Period: s.gran.Period(t), Session: session}
	id, aead, err := s.live(ctx, ref, sessionLevel)
	if err != nil {
		return nil, err
	}
	hdr := 1 + uvarintLen(uint64(len(ref.Tenant))) + len(ref.Tenant) + uvarintLen(uint64(len(ref.Period))) + len(ref.Period) +
		uvarintLen(uint64(len(ref.Session))) + len(ref.Session) + len(id)
	out := appendHeader(make([]byte, 0, hdr+nonceSize+len(plaintext)+gcmTag), ref.Tenant, ref.Period, ref.Session, id)
	out = out[:hdr+nonceSize]
	if _, err := rand.Read(out[hdr:]); err != nil {
		return nil, err
	}
	return aead.Seal(out, out[hdr:], plaintext, additional(out[:hdr], aad)), nil
}

// additional is the GCM additional data: the envelope's header, then the
// caller's (the header is self-delimiting). It is a copy: GCM's additional
// data may not overlap its output.
func additional(hdr, aad []byte) []byte {
	ad := make([]byte, 0, len(hdr)+len(aad))
	return append(append(ad, hdr...), aad...)
}

// Open opens a value Seal returned, for tenant and with the same aad.
// Errors: ErrMalformed, ErrWrongTenant, ErrErased, ErrUnknownKey,
// ErrTampered, ErrWrongKEK, or the key store's.
func (s *Sealer) Open(ctx context.Context, tenant string, sealed, aad []byte) ([]byte, error) {
	e, hdr, err := ParseEnvelope(sealed)
	if err != nil {
		return nil, err
	}
	if e.Tenant != tenant {
		return nil, fmt.Errorf("%w: asked for tenant %q", ErrWrongTenant, tenant)
	}
	ref := KeyRef{Kind: KindSession, Tenant: e.Tenant, Period: e.Period, Session: e.Session}
	// The session key's row is read on every Open, cached or not: a key
	// another process destroyed (forget, retention) is seen at once, not
	// after the cache's TTL. Opening is for people and replay, never on
	// the decision path; Seal alone relies on the cache.
	if _, err := s.get(ctx, ref, e.Key); err != nil {
		if errors.Is(err, ErrErased) {
			s.cache.drop(func(r KeyRef) bool { return r == ref })
		}
		return nil, err
	}
	aead, err := s.byID(ctx, ref, e.Key, sessionLevel)
	if err != nil {
		return nil, err
	}
	p, err := aead.Open(nil, e.Nonce[:], e.Ciphertext, additional(sealed[:hdr], aad))
	if err != nil {
		return nil, ErrTampered
	}
	return p, nil
}

// A level of the key hierarchy: how a new key of it is wrapped (mint, which
// sets w's parent and wrapped bytes) and how a stored one is unwrapped.
type level struct {
	name   string
	mint   func(s *Sealer, ctx context.Context, w *WrappedKey, key []byte) error
	unwrap func(s *Sealer, ctx context.Context, w WrappedKey) (cipher.AEAD, error)
}

var (
	// sessionLevel: a session key, wrapped by its period's live DEK.
	sessionLevel = &level{
		name: "session key",
		mint: func(s *Sealer, ctx context.Context, w *WrappedKey, key []byte) error {
			dekID, dek, err := s.live(ctx, KeyRef{Kind: KindDEK, Tenant: w.Tenant, Period: w.Period}, dekLevel)
			if err != nil {
				return err
			}
			w.Parent = dekID
			n := nonce()
			w.Wrapped = dek.Seal(n, n, key, sessionAD(*w))
			return nil
		},
		unwrap: (*Sealer).unwrapSession,
	}
	// dekLevel: a period DEK, wrapped by the KEK.
	dekLevel = &level{
		name: "DEK",
		mint: func(s *Sealer, _ context.Context, w *WrappedKey, key []byte) (err error) {
			w.KEK = s.kek.ID()
			if w.Wrapped, err = s.kek.Wrap(key, dekAD(*w)); err != nil {
				return fmt.Errorf("seal: wrap a DEK: %w", err)
			}
			return nil
		},
		unwrap: func(s *Sealer, _ context.Context, w WrappedKey) (cipher.AEAD, error) { return unwrapDEK(s.kek, w) },
	}
)

// live returns ref's current key of level lv, creating it (and, for a
// session key, its period DEK) when there is none.
func (s *Sealer) live(ctx context.Context, ref KeyRef, lv *level) (KeyID, cipher.AEAD, error) {
	if id, aead, ok := s.cache.get(cacheKey{live: true, KeyRef: ref}); ok {
		return id, aead, nil
	}
	w, err := s.store.Live(ctx, ref)
	if errors.Is(err, ErrNoKey) {
		w = WrappedKey{KeyRef: ref}
		key, err := fresh(&w.ID)
		if err != nil {
			return KeyID{}, nil, err
		}
		err = lv.mint(s, ctx, &w, key)
		clear(key)
		if err != nil {
			return KeyID{}, nil, err
		}
		if w, err = s.store.Add(ctx, w); err != nil {
			return KeyID{}, nil, fmt.Errorf("seal: store a %s: %w", lv.name, err)
		}
	} else if err != nil {
		return KeyID{}, nil, fmt.Errorf("seal: %s: %w", lv.name, err)
	}
	aead, err := lv.unwrap(s, ctx, w)
	if err != nil {
		return KeyID{}, nil, err
	}
	s.cache.put(cacheKey{live: true, KeyRef: ref}, w.ID, aead)
	s.cache.put(cacheKey{KeyRef: ref, id: w.ID}, w.ID, aead)
	return w.ID, aead, nil
}

// byID returns ref's key id of level lv (for Open, and a session key's
// DEK).
func (s *Sealer) byID(ctx context.Context, ref KeyRef, id KeyID, lv *level) (cipher.AEAD, error) {
	if _, aead, ok := s.cache.get(cacheKey{KeyRef: ref, id: id}); ok {
		return aead, nil
	}
	w, err := s.get(ctx, ref, id)
	if err != nil {
		return nil, err
	}
	aead, err := lv.unwrap(s, ctx, w)
	if err != nil {
		return nil, err
	}
	s.cache.put(cacheKey{KeyRef: ref, id: id}, id, aead)
	return aead, nil
}

// get reads ref's key id, mapping a tombstone to ErrErased and an
// unknown key to ErrUnknownKey.
func (s *Sealer) get(ctx context.Context, ref KeyRef, id KeyID) (WrappedKey, error) {
	w, err := s.store.Get(ctx, ref, id)
	switch {
	case errors.Is(err, ErrNoKey):
		return w, fmt.Errorf("%w (%s)", ErrUnknownKey, describe(ref, id))
	case err != nil:
		return w, fmt.Errorf("seal: read %s: %w", describe(ref, id), err)
	case w.Destroyed || w.Wrapped == nil:
		return w, fmt.Errorf("%w: %s", ErrErased, describe(ref, id))
	}
	return w, nil
}

// unwrapSession unwraps the session key w with its period DEK.
func (s *Sealer) unwrapSession(ctx context.Context, w WrappedKey) (cipher.AEAD, error) {
	dek, err := s.byID(ctx, KeyRef{Kind: KindDEK, Tenant: w.Tenant, Period: w.Period}, w.Parent, dekLevel)
	if err != nil {
		return nil, err
	}
	if len(w.Wrapped) < nonceSize+gcmTag {
		return nil, fmt.Errorf("%w: %s wrapped key too short", ErrTampered, describe(w.KeyRef, w.ID))
	}
	key, err := dek.Open(nil, w.Wrapped[:nonceSize], w.Wrapped[nonceSize:], sessionAD(w))
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not unwrap", ErrTampered, describe(w.KeyRef, w.ID))
	}
	defer clear(key)
	return newGCM(key)
}

func unwrapDEK(kek KEK, w WrappedKey) (cipher.AEAD, error) {
	key, err := unwrapDEKBytes(kek, w)
	if err != nil {
		return nil, err
	}
	defer clear(key)
	return newGCM(key)
}

func unwrapDEKBytes(kek KEK, w WrappedKey) ([]byte, error) {
	if w.KEK != kek.ID() {
		return nil, fmt.Errorf("%w: %s is wrapped by %s, not %s", ErrWrongKEK, describe(w.KeyRef, w.ID), w.KEK, kek.ID())
	}
	key, err := kek.Unwrap(w.Wrapped, dekAD(w))
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not unwrap: %v", ErrTampered, describe(w.KeyRef, w.ID), err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: %s unwraps to %d bytes", ErrTampered, describe(w.KeyRef, w.ID), len(key))
	}
	return key, nil
}

// ForgetSession destroys tenant's session keys for session in every
// period: its sealed values are erased, every other value still opens. It
// returns how many keys it destroyed.
func (s *Sealer) ForgetSession(ctx context.Context, tenant, session string) (int, error) {
	n, err := s.store.DestroySession(ctx, tenant, session)
	s.cache.drop(func(r KeyRef) bool { return r.Kind == KindSession && r.Tenant == tenant && r.Session == session })
	if err != nil {
		return n, fmt.Errorf("seal: forget session: %w", err)
	}
	return n, nil
}

// DestroyPeriod destroys tenant's DEK for period and the session keys it
// wraps: every value sealed in that period is erased. It returns how many
// keys it destroyed.
func (s *Sealer) DestroyPeriod(ctx context.Context, tenant, period string) (int, error) {
	n, err := s.store.DestroyPeriod(ctx, tenant, period)
	s.cache.drop(func(r KeyRef) bool { return r.Tenant == tenant && r.Period == period })
	if err != nil {
		return n, fmt.Errorf("seal: destroy period: %w", err)
	}
	return n, nil
}

// ExpirePeriods destroys, for every tenant, each period that ended at or
// before cutoff (retention: every value sealed in it is older than
// cutoff). It returns the periods destroyed.
func (s *Sealer) ExpirePeriods(ctx context.Context, cutoff time.Time) ([]KeyRef, error) {
	deks, err := s.store.DEKs(ctx)
	if err != nil {
		return nil, fmt.Errorf("seal: list DEKs: %w", err)
	}
	var done []KeyRef
	for _, w := range deks {
		end, err := PeriodEnd(w.Period)
		if err != nil || end.After(cutoff) {
			continue
		}
		if _, err := s.DestroyPeriod(ctx, w.Tenant, w.Period); err != nil {
			return done, err
		}
		done = append(done, w.KeyRef)
	}
	return done, nil
}

// Rotate rewraps every live DEK in store from oldKEK to newKEK; session
// keys and sealed values are untouched, and afterwards only newKEK is
// needed. DEKs already wrapped by newKEK are skipped, so an interrupted
// rotation is finished by running it again. It returns how many DEKs it
// rewrapped. Sealers still holding oldKEK must be restarted with newKEK.
func Rotate(ctx context.Context, store KeyStore, oldKEK, newKEK KEK) (int, error) {
	deks, err := store.DEKs(ctx)
	if err != nil {
		return 0, fmt.Errorf("seal: rotate: list DEKs: %w", err)
	}
	n := 0
	for _, w := range deks {
		if w.KEK == newKEK.ID() {
			continue
		}
		key, err := unwrapDEKBytes(oldKEK, w)
		if err != nil {
			return n, fmt.Errorf("seal: rotate: %w", err)
		}
		wrapped, err := newKEK.Wrap(key, dekAD(w))
		clear(key)
		if err != nil {
			return n, fmt.Errorf("seal: rotate: wrap %s: %w", describe(w.KeyRef, w.ID), err)
		}
		if err := store.Rewrap(ctx, w, newKEK.ID(), wrapped); err != nil {
			return n, fmt.Errorf("seal: rotate: %s: %w", describe(w.KeyRef, w.ID), err)
		}
		n++
	}
	return n, nil
}

// fresh draws a new key and its id.
func fresh(id *KeyID) ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	return key, nil
}

// nonce returns a buffer holding a random GCM nonce, room for the rest.
func nonce() []byte {
	b := make([]byte, nonceSize, nonceSize+KeySize+gcmTag)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand.Read does not fail (it crashes the program)
	}
	return b
}

// dekAD binds a wrapped DEK to its tenant, period and id.
func dekAD(w WrappedKey) []byte {
	b := append([]byte("warden/seal dek v1\x00"), byte(KindDEK))
	b = appendString(b, w.Tenant)
	b = appendString(b, w.Period)
	return append(b, w.ID[:]...)
}

// sessionAD binds a wrapped session key to its tenant, period, session,
// id and DEK.
func sessionAD(w WrappedKey) []byte {
	b := append([]byte("warden/seal session v1\x00"), byte(KindSession))
	b = appendString(b, w.Tenant)
	b = appendString(b, w.Period)
	b = appendString(b, w.Session)
	b = append(b, w.ID[:]...)
	return append(b, w.Parent[:]...)
}

func describe(ref KeyRef, id KeyID) string {
	if ref.Kind == KindDEK {
		return fmt.Sprintf("DEK %s of tenant %q, period %s", id, ref.Tenant, ref.Period)
	}
	return fmt.Sprintf("session key %s of tenant %q, period %s, session %q", id, ref.Tenant, ref.Period, ref.Session)
}
