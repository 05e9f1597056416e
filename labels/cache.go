package labels

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults of a Cache: how many sessions' labels it holds (least
// recently used first out), and how long an entry is trusted before the
// store is read again, so that labels another process added to a shared
// store are seen within that time.
const (
	DefaultCacheSize = 4096
	DefaultCacheTTL  = 2 * time.Second
)

// CodeUnavailable is the reason code of a step refused because the
// session's labels could not be read or kept (fail closed: a lost label
// could let a flow rule be bypassed).
const CodeUnavailable = "labels_unavailable"

// Cache keeps sessions' labels in memory in front of a Store:
// a bounded LRU, written through (Add writes the store before the cache).
// With a nil store it is the only copy: labels then live as long as the
// process and the entry (eviction forgets them). It is safe for
// concurrent use; the slices it returns are shared and must not be
// changed.
type Cache struct {
	store Store
	size  int
	ttl   time.Duration
	now   func() time.Time

	mu  sync.Mutex
	m   map[labelKey]*list.Element
	lru list.List // of *labelEntry, most recently used first
}

type labelKey struct{ tenant, session string }

type labelEntry struct {
	key    labelKey
	labels []string // sorted; shared, never changed in place
	at     time.Time
}

// NewCache returns a cache of at most size sessions (<= 0:
// DefaultCacheSize) whose entries are read again from store after
// ttl (0: DefaultCacheTTL; negative: never, for a store no other
// process writes). store may be nil.
func NewCache(store Store, size int, ttl time.Duration) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	if ttl == 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{store: store, size: size, ttl: ttl, now: time.Now, m: map[labelKey]*list.Element{}}
}

// Labels returns the session's labels, sorted (nil: none). A session
// without an id has none.
func (c *Cache) Labels(ctx context.Context, tenant, session string) ([]string, error) {
	if session == "" {
		return nil, nil
	}
	k := labelKey{tenant, session}
	c.mu.Lock()
	if el, ok := c.m[k]; ok {
		e := el.Value.(*labelEntry)
		if c.store == nil || c.ttl < 0 || c.now().Sub(e.at) < c.ttl {
			c.lru.MoveToFront(el)
			ls := e.labels
			c.mu.Unlock()
			return ls, nil
		}
	}
	c.mu.Unlock()
	if c.store == nil {
		return nil, nil
	}
	ls, err := c.store.SessionLabels(ctx, tenant, session)
	if err != nil {
		return nil, fmt.Errorf("reading the session's labels: %w", err)
	}
	if len(ls) == 0 {
		ls = nil
	}
	c.put(k, ls)
	return ls, nil
}

// Add adds labels to the session, in the store first, and returns the
// session's labels after the change. A session without an id takes none.
func (c *Cache) Add(ctx context.Context, tenant, session string, labels []string) ([]string, error) {
	if session == "" || len(labels) == 0 {
		return nil, nil
	}
	for _, l := range labels {
		if err := Valid(l); err != nil {
			return nil, err
		}
	}
	k := labelKey{tenant, session}
	var all []string
	if c.store != nil {
		var err error
		if all, err = c.store.AddSessionLabels(ctx, tenant, session, labels, c.now()); err != nil {
			return nil, fmt.Errorf("keeping the session's labels: %w", err)
		}
	} else {
		c.mu.Lock()
		var have []string
		if el, ok := c.m[k]; ok {
			have = el.Value.(*labelEntry).labels
		}
		c.mu.Unlock()
		all = Merge(have, labels)
		if len(all) > MaxPerSession {
			return nil, ErrTooMany
		}
	}
	c.put(k, all)
	return all, nil
}

// put makes ls the session's cached labels, evicting the least recently
// used entry when the cache is full. Labels only grow (none is ever
// taken away), so ls is merged with what the entry holds: of two
// concurrent Adds, the one that returns last cannot hide the other's.
func (c *Cache) put(k labelKey, ls []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		e := el.Value.(*labelEntry)
		if len(Missing(ls, e.labels)) > 0 {
			ls = Merge(e.labels, ls)
		}
		e.labels, e.at = ls, c.now()
		c.lru.MoveToFront(el)
		return
	}
	if c.lru.Len() >= c.size {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*labelEntry).key)
	}
	c.m[k] = c.lru.PushFront(&labelEntry{key: k, labels: ls, at: c.now()})
}

// Len returns how many sessions the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
