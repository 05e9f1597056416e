package labels

import "time"

// SetNow sets the clock c reads (tests of the TTL).
func SetNow(c *Cache, now func() time.Time) { c.now = now }
