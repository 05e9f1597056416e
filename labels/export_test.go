package labels

import "time"

// SetNow sets the clock c reads (tests of the TTL).
func SetNow(c *Cache, now func() time.Time) { c.now = now }

// Pending returns how many reads wait for a query.
func (b *Batch) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
