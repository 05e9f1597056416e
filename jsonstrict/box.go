package jsonstrict

import "unsafe"

// Boxing a string, a float64 or a slice in an interface (any) allocates a
// copy of it on the heap, one allocation per value: for a parsed request,
// most of its allocations. A slab puts many values in one array instead
// and makes each interface point at its element, as the runtime's own
// boxing would point at its copy: one allocation per chunk.
//
// This relies on the layout of an empty interface (a type word and a data
// word pointing at the value), which every Go release so far shares and
// which TestBoxedValues checks. An element, once boxed, is never written
// again (a slab only grows, and is never reused: the values it boxes go on
// into the event and the trace), so each interface is as immutable as one
// the runtime boxed.

// eface is the layout of an empty interface.
type eface struct {
	typ, data unsafe.Pointer
}

// typeOf returns the type word of v.
func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	stringType = typeOf("")
	floatType  = typeOf(float64(0))
	sliceType  = typeOf([]any(nil))
)

// boxAt returns the interface of type typ whose value is at p.
func boxAt(typ, p unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// The largest chunk, in values; each chunk doubles the last, from the
// first's size (firstChunk, or a hint). A parse wastes at most the unused
// end of the last chunk of each slab: at most 40 KiB, a few hundred bytes
// on the bench request.
const maxChunk = 1024

// firstChunk is the size of the first chunk of the slabs without a hint.
const firstChunk = 8

// grow returns the size of the chunk after one of capacity last.
func grow(last, hint int) int {
	n := max(2*last, hint, firstChunk)
	return min(n, maxChunk)
}

// boxes are the slabs of one parse.
type boxes struct {
	strs  []string  // boxed strings
	nums  []float64 // boxed numbers
	hdrs  [][]any   // boxed slice headers (the arrays)
	elems []any     // the elements of the arrays
	hint  int       // the size of the first chunk of strs
}

// str boxes s.
func (b *boxes) str(s string) any {
	if s == "" {
		return "" // the runtime boxes "" without allocating
	}
	if len(b.strs) == cap(b.strs) {
		b.strs = make([]string, 0, grow(cap(b.strs), b.hint))
	}
	b.strs = append(b.strs, s)
	return boxAt(stringType, unsafe.Pointer(&b.strs[len(b.strs)-1]))
}

// num boxes f.
func (b *boxes) num(f float64) any {
	if len(b.nums) == cap(b.nums) {
		b.nums = make([]float64, 0, grow(cap(b.nums), 0))
	}
	b.nums = append(b.nums, f)
	return boxAt(floatType, unsafe.Pointer(&b.nums[len(b.nums)-1]))
}

// array returns a copy of vals, boxed; an empty vals is a non-nil empty
// slice, as encoding/json decodes []. The copy is a full slice expression
// of the elements' slab, so appending to it never writes over a neighbour.
func (b *boxes) array(vals []any) any {
	n := len(vals)
	var a []any
	switch {
	case n == 0:
		a = []any{}
	case n > maxChunk/2: // a large array is a chunk of its own
		a = make([]any, n)
	default:
		if cap(b.elems)-len(b.elems) < n {
			b.elems = make([]any, 0, max(grow(cap(b.elems), 2*firstChunk), n))
		}
		m := len(b.elems)
		b.elems = b.elems[:m+n]
		a = b.elems[m : m+n : m+n]
	}
	copy(a, vals)
	if len(b.hdrs) == cap(b.hdrs) {
		b.hdrs = make([][]any, 0, grow(cap(b.hdrs), 0))
	}
	b.hdrs = append(b.hdrs, a)
	return boxAt(sliceType, unsafe.Pointer(&b.hdrs[len(b.hdrs)-1]))
}
