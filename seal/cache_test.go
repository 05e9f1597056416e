package seal

import (
	"testing"
	"time"
)

// TestKeyCache: the cache holds at most its bound (least recently used
// out first), forgets an entry past its TTL, and drops what it is told.
func TestKeyCache(t *testing.T) {
	ref := func(s string) cacheKey { return cacheKey{KeyRef: KeyRef{Kind: KindSession, Tenant: "t", Session: s}} }
	aead, err := newGCM(make([]byte, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	c := newKeyCache(2, time.Hour)
	c.put(ref("a"), KeyID{1}, aead)
	c.put(ref("b"), KeyID{2}, aead)
	c.get(ref("a"))
	c.put(ref("c"), KeyID{3}, aead)
	if _, _, ok := c.get(ref("b")); ok || c.len() != 2 {
		t.Fatalf("b not evicted, %d entries", c.len())
	}
	if id, _, ok := c.get(ref("a")); !ok || id != (KeyID{1}) {
		t.Fatal("a evicted")
	}
	c.drop(func(r KeyRef) bool { return r.Session == "a" })
	if _, _, ok := c.get(ref("a")); ok || c.len() != 1 {
		t.Fatal("a not dropped")
	}
	c = newKeyCache(2, time.Nanosecond)
	c.put(ref("a"), KeyID{1}, aead)
	time.Sleep(time.Millisecond)
	if _, _, ok := c.get(ref("a")); ok || c.len() != 0 {
		t.Fatal("an expired entry was returned")
	}
	c = newKeyCache(-1, time.Hour)
	c.put(ref("a"), KeyID{1}, aead)
	if c.len() != 0 {
		t.Fatal("a disabled cache holds an entry")
	}
}
