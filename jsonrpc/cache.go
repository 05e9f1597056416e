package jsonrpc

import "sync"

// Cache is a bounded correlation cache: it remembers a value per key (a
// request's id, an execution id, a task id) for the answer that follows,
// and forgets the oldest key first when full, so memory stays bounded
// however many requests are never answered. It is safe for concurrent use;
// every operation is O(1) but Drain.
type Cache[V any] struct {
	mu   sync.Mutex
	m    map[string]entry[V]
	ring []string // keys in insertion order ("" or a taken key: a free slot)
	next int
}

type entry[V any] struct {
	v    V
	slot int // the key's ring slot
}

// NewCache returns a cache of at most size keys (size >= 1).
func NewCache[V any](size int) *Cache[V] {
	if size < 1 {
		size = 1
	}
	return &Cache[V]{m: make(map[string]entry[V]), ring: make([]string, size)}
}

// Put remembers v for key ("" is ignored). A key already present gets the
// new value and keeps its place in the eviction order.
func (c *Cache[V]) Put(key string, v V) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.m[key] = entry[V]{v, e.slot}
		return
	}
	if old := c.ring[c.next]; old != "" {
		if e, ok := c.m[old]; ok && e.slot == c.next {
			delete(c.m, old) // the oldest is forgotten
		}
	}
	c.ring[c.next] = key
	c.m[key] = entry[V]{v, c.next}
	c.next = (c.next + 1) % len(c.ring)
}

// Get returns the value of key, if it is still remembered.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e.v, ok
}

// Take returns and forgets the value of key. Its ring slot is freed lazily
// (the next Put over it finds no key to evict).
func (c *Cache[V]) Take(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if ok {
		delete(c.m, key)
	}
	return e.v, ok
}

// Len returns the number of keys remembered.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Drain returns every remembered value, oldest first, and empties the cache.
func (c *Cache[V]) Drain() []V {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []V
	for i := range c.ring {
		slot := (c.next + i) % len(c.ring)
		if e, ok := c.m[c.ring[slot]]; ok && e.slot == slot {
			out = append(out, e.v)
		}
	}
	c.m = make(map[string]entry[V])
	clear(c.ring)
	c.next = 0
	return out
}
