package jsonrpc

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		m    map[string]any
		want Kind
	}{
		{"request", map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "m"}, Request},
		{"request with a string id", map[string]any{"id": "a", "method": "m"}, Request},
		{"notification", map[string]any{"method": "m"}, Notification},
		{"null id is still a request", map[string]any{"method": "m", "id": nil}, Request},
		{"result", map[string]any{"id": 1.0, "result": map[string]any{}}, Response},
		{"error", map[string]any{"id": nil, "error": map[string]any{}}, Response},
		{"method not a string", map[string]any{"id": 1.0, "method": 5.0}, Invalid},
		{"id an object", map[string]any{"id": map[string]any{}, "method": "m"}, Invalid},
		{"nothing", map[string]any{"hello": 1.0}, Invalid},
	}
	for _, tt := range tests {
		if got := Classify(tt.m); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIDs(t *testing.T) {
	for _, tt := range []struct {
		id         any
		key, text  string
		ok, usable bool
	}{
		{"a", "sa", "a", true, true},
		{1.5, "n1.5", "1.5", true, true},
		{nil, "", "", false, true},
		{true, "", "", false, false},
	} {
		k, ok := IDKey(tt.id)
		if k != tt.key || ok != tt.ok || IDText(tt.id) != tt.text || ValidID(tt.id) != tt.usable {
			t.Errorf("%v: key %q %v text %q valid %v", tt.id, k, ok, IDText(tt.id), ValidID(tt.id))
		}
	}
	// A string id and a number id that print alike are different keys.
	a, _ := IDKey("1")
	b, _ := IDKey(1.0)
	if a == b {
		t.Error(`"1" and 1 share a key`)
	}
}

func TestCache(t *testing.T) {
	c := NewCache[int](3)
	for i := range 5 {
		c.Put(fmt.Sprint(i), i)
	}
	if _, ok := c.Get("1"); ok || c.Len() != 3 {
		t.Fatalf("oldest not evicted: len %d", c.Len())
	}
	if v, ok := c.Take("3"); !ok || v != 3 {
		t.Fatal("take")
	}
	c.Put("3", 33) // a taken key put again must survive its old slot's eviction
	c.Put("5", 5)
	if v, ok := c.Get("3"); !ok || v != 33 {
		t.Fatalf("re-put key lost: %v %v", v, ok)
	}
	c.Put("2", 22) // refresh keeps the slot
	// Ring: 3 (re-put over 2's slot), 5, 2 (over 4's): oldest first.
	if got := c.Drain(); !reflect.DeepEqual(got, []int{33, 5, 22}) {
		t.Fatalf("drain %v", got)
	}
	if c.Len() != 0 {
		t.Fatal("not empty after drain")
	}
	// Bounded under concurrent use.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := fmt.Sprint(g, "-", i)
				c.Put(k, i)
				c.Take(fmt.Sprint(g, "-", i-1))
			}
		}()
	}
	wg.Wait()
	if c.Len() > 3 {
		t.Fatalf("len %d over the bound", c.Len())
	}
}
