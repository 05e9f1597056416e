package jsonstrict

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestBoxedValues checks that the values the slabs box behave as the ones
// the runtime boxes: type switches, comparison, reflection, encoding, and
// that they survive garbage collection once only the interfaces point at
// their slabs, across chunk boundaries.
func TestBoxedValues(t *testing.T) {
	var b boxes
	var strs, nums, arrs []any
	for i := range 3 * maxChunk { // past the largest chunk
		strs = append(strs, b.str(fmt.Sprintf("s%d", i)))
		nums = append(nums, b.num(float64(i)+0.5))
		arrs = append(arrs, b.array([]any{float64(i), "x"}))
	}
	b = boxes{} // only the interfaces keep the slabs alive
	runtime.GC()
	runtime.GC()
	for i := range strs {
		s, ok := strs[i].(string)
		if !ok || s != fmt.Sprintf("s%d", i) || strs[i] != any(fmt.Sprintf("s%d", i)) {
			t.Fatalf("string %d: %#v", i, strs[i])
		}
		if f, ok := nums[i].(float64); !ok || f != float64(i)+0.5 || nums[i] != any(float64(i)+0.5) {
			t.Fatalf("number %d: %#v", i, nums[i])
		}
		a, ok := arrs[i].([]any)
		if !ok || !reflect.DeepEqual(a, []any{float64(i), "x"}) || cap(a) != 2 {
			t.Fatalf("array %d: %#v (cap %d)", i, arrs[i], cap(a))
		}
	}
	// Appending to a boxed array never writes over its neighbour in the slab.
	var b2 boxes
	first, second := b2.array([]any{"a"}).([]any), b2.array([]any{"b"}).([]any)
	_ = append(first, "clobber")
	if second[0] != "b" {
		t.Fatalf("append to one array wrote over the next: %v", second)
	}
	if e, ok := b2.array(nil).([]any); !ok || e == nil || len(e) != 0 {
		t.Fatalf("empty array: %#v, want a non-nil empty []any", e)
	}
	if v := b2.str(""); v != any("") {
		t.Fatalf(`empty string: %#v`, v)
	}
	m := map[string]any{"s": strs[1], "n": nums[1], "a": arrs[1]}
	got, err := json.Marshal(m)
	if want := `{"a":[1,"x"],"n":1.5,"s":"s1"}`; err != nil || string(got) != want {
		t.Fatalf("json.Marshal: %s, %v; want %s", got, err, want)
	}
	if k := reflect.TypeOf(strs[0]).Kind(); k != reflect.String {
		t.Fatalf("reflect kind %v", k)
	}
	if !strings.HasPrefix(fmt.Sprint(strs[2]), "s2") {
		t.Fatalf("fmt: %v", strs[2])
	}
	// Boxed values are usable as map keys and hash as the runtime's do.
	set := map[any]bool{strs[5]: true, nums[5]: true}
	if !set["s5"] || !set[5.5] {
		t.Fatalf("map keys: %v", set)
	}
}
