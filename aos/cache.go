package aos

import (
	"sync"

	"github.com/wardenhq/warden"
)

// cacheSize bounds each correlation cache: a result whose request is more
// than this many requests old gets an empty tool view.
const cacheSize = 10000

// toolCache correlates a result with the tool of an earlier request: the
// executionId of steps/toolCallRequest, the id of an MCP tools/call. It is a
// fixed-size ring: when full, the oldest entry is evicted (FIFO), so memory
// stays bounded however many requests never see their result.
type toolCache struct {
	mu   sync.Mutex
	m    map[string]warden.Tool
	ring []string
	next int
}

func newToolCache(n int) *toolCache {
	return &toolCache{m: make(map[string]warden.Tool), ring: make([]string, n)}
}

// put remembers the tool of request key. A key seen again is refreshed in
// place and keeps its slot in the ring.
func (c *toolCache) put(key string, t warden.Tool) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		c.m[key] = t
		return
	}
	if old := c.ring[c.next]; old != "" {
		delete(c.m, old)
	}
	c.ring[c.next] = key
	c.next = (c.next + 1) % len(c.ring)
	c.m[key] = t
}

// get returns the tool of request key, if it is still remembered.
func (c *toolCache) get(key string) (warden.Tool, bool) {
	if key == "" {
		return warden.Tool{}, false
	}
	c.mu.Lock()
	t, ok := c.m[key]
	c.mu.Unlock()
	return t, ok
}
