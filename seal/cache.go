package seal

import (
	"container/list"
	"crypto/cipher"
	"sync"
	"time"
)

const (
	// DefaultKeyCache is how many unwrapped keys (DEKs and session keys) a
	// Sealer keeps in memory by default: a warm Seal or Open then pays one
	// AES-GCM operation. About 1 KiB each (an AES-GCM instance and its
	// reference).
	DefaultKeyCache = 4096
	// DefaultKeyTTL is how long a Sealer keeps an unwrapped key by default:
	// a key another process destroys stays usable here for at most this.
	DefaultKeyTTL = 5 * time.Minute
)

// cacheKey names a cached key. live marks the entry Seal looks up (the
// reference's current key, any id); the others are looked up by id.
type cacheKey struct {
	live bool
	KeyRef
	id KeyID
}

type cacheEntry struct {
	k    cacheKey
	id   KeyID // the key's id (for a live entry)
	aead cipher.AEAD
	at   time.Time
}

// keyCache is a bounded LRU of unwrapped keys with a time to live.
type keyCache struct {
	mu   sync.Mutex
	max  int
	ttl  time.Duration
	ll   *list.List
	byID map[cacheKey]*list.Element
}

func newKeyCache(max int, ttl time.Duration) *keyCache {
	return &keyCache{max: max, ttl: ttl, ll: list.New(), byID: map[cacheKey]*list.Element{}}
}

func (c *keyCache) get(k cacheKey) (KeyID, cipher.AEAD, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[k]
	if !ok {
		return KeyID{}, nil, false
	}
	e := el.Value.(*cacheEntry)
	if time.Since(e.at) >= c.ttl {
		c.ll.Remove(el)
		delete(c.byID, k)
		return KeyID{}, nil, false
	}
	c.ll.MoveToFront(el)
	return e.id, e.aead, true
}

func (c *keyCache) put(k cacheKey, id KeyID, aead cipher.AEAD) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[k]; ok {
		e := el.Value.(*cacheEntry)
		e.id, e.aead, e.at = id, aead, time.Now()
		c.ll.MoveToFront(el)
		return
	}
	c.byID[k] = c.ll.PushFront(&cacheEntry{k: k, id: id, aead: aead, at: time.Now()})
	for c.ll.Len() > c.max {
		el := c.ll.Back()
		c.ll.Remove(el)
		delete(c.byID, el.Value.(*cacheEntry).k)
	}
}

// drop removes every entry match accepts.
func (c *keyCache) drop(match func(KeyRef) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*cacheEntry); match(e.k.KeyRef) {
			c.ll.Remove(el)
			delete(c.byID, e.k)
		}
		el = next
	}
}

func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
