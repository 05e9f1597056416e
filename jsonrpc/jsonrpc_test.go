package jsonrpc

import (
	"encoding/json"
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
		{"request", map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "m"}, KindRequest},
		{"request with a string id", map[string]any{"id": "a", "method": "m"}, KindRequest},
		{"notification", map[string]any{"method": "m"}, KindNotification},
		{"null id is still a request", map[string]any{"method": "m", "id": nil}, KindRequest},
		{"result", map[string]any{"id": 1.0, "result": map[string]any{}}, KindResponse},
		{"error", map[string]any{"id": nil, "error": map[string]any{}}, KindResponse},
		{"method not a string", map[string]any{"id": 1.0, "method": 5.0}, KindInvalid},
		{"id an object", map[string]any{"id": map[string]any{}, "method": "m"}, KindInvalid},
		{"nothing", map[string]any{"hello": 1.0}, KindInvalid},
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

// TestOwnCodes holds warden's own refusal codes outside every band a
// wrapped protocol or its SDKs use, distinct from each other.
func TestOwnCodes(t *testing.T) {
	own := []int{CodeDenied, CodeUpstream, CodeUnauthenticated, CodeForbidden}
	// Codes the wrapped protocols (MCP, A2A 0.3/1.0, ACS, AOS) and their
	// official SDKs define or use.
	taken := map[int]string{
		-31001: "MCP Go SDK unsupported method",
		-31401: "a2a-go unauthenticated", -31403: "a2a-go unauthorized",
		-32042: "MCP URL elicitation required",
	}
	seen := map[int]bool{}
	for _, c := range own {
		if c >= -32768 && c <= -32000 {
			t.Errorf("%d is in JSON-RPC's reserved range (-32768..-32000)", c)
		}
		if why, ok := taken[c]; ok {
			t.Errorf("%d is %s", c, why)
		}
		if seen[c] {
			t.Errorf("%d twice", c)
		}
		seen[c] = true
	}
}

func TestDenyDataAndErrorResponse(t *testing.T) {
	d := DenyData("no wires", "rec-1", "pol", []string{"approval_denied", "wire"})
	want := map[string]string{"name": NameDenied, "reason": "no wires", "recordId": "rec-1", "policyId": "pol", "reasonCode": "approval_denied,wire"}
	if len(d) != len(want) {
		t.Fatalf("DenyData = %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Fatalf("DenyData[%s] = %q, want %q", k, d[k], v)
		}
	}
	if d := DenyData("r", "", "", nil); len(d) != 2 {
		t.Fatalf("empty members kept: %v", d)
	}
	got := string(ErrorResponse(json.RawMessage(`7`), CodeDenied, "denied by warden: x", map[string]string{"reason": "x"}))
	if got != `{"error":{"code":-31900,"data":{"reason":"x"},"message":"denied by warden: x"},"id":7,"jsonrpc":"2.0"}` {
		t.Fatalf("ErrorResponse = %s", got)
	}
	if got := string(ErrorResponse(nil, CodeUnauthenticated, "m", nil)); got != `{"error":{"code":-31902,"message":"m"},"id":null,"jsonrpc":"2.0"}` {
		t.Fatalf("ErrorResponse(nil) = %s", got)
	}
}

func TestRequestID(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"x"}`: `12345678901234567890`,
		`{"jsonrpc":"2.0","id":"a","method":"x"}`:                  `"a"`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`:                 `null`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`:              `null`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`:                  `null`,
		`{"jsonrpc":"2.0","id":1,"method":`:                        `null`,
		``:                                                         `null`,
	} {
		if got := string(RequestID([]byte(body))); got != want {
			t.Errorf("RequestID(%s) = %s, want %s", body, got, want)
		}
	}
}
