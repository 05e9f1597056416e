package aos

import (
	"sync"

	"github.com/wardenhq/warden/jsonstrict"
)

// parseState is what parsing a body needs beside the values it builds: the
// parser with its scratch stacks (the JSON path, the members and elements
// of the open objects and arrays) and the calls. The values built (the
// params maps, slices and strings) are not part of it: they go on into the
// event and the trace. Handle takes a parseState from statePool and puts it
// back once the response is built, so a request allocates none of it.
type parseState struct {
	p     jsonstrict.Parser
	one   call    // the request of a single body, or the first of a batch
	calls []*call // what parseBody returns
}

// maxPooledScratch bounds, in entries, each scratch buffer a parseState
// keeps when it goes back to the pool: a state that grew past it on a
// large body is left to the garbage collector instead, so the pool never
// holds more than a few KiB per state.
const maxPooledScratch = 1024

var statePool = sync.Pool{New: func() any {
	return &parseState{one: call{pspans: make([]jsonstrict.Span, 0, 8)}, calls: make([]*call, 0, 1)}
}}

// newParseState returns a parseState from the pool, ready to parse.
func newParseState() *parseState { return statePool.Get().(*parseState) }

// release clears st (so the pool keeps no reference into a body or its
// values) and puts it back in the pool; st must not be used after.
func (st *parseState) release() {
	if st.p.Scratch() > maxPooledScratch || cap(st.one.pspans) > maxPooledScratch || cap(st.calls) > maxPooledScratch {
		return
	}
	st.p.Reset()
	spans := st.one.pspans[:cap(st.one.pspans)]
	clear(spans)
	st.one = call{pspans: spans[:0]}
	if st.one.pspans == nil {
		st.one.pspans = make([]jsonstrict.Span, 0, 8)
	}
	calls := st.calls[:cap(st.calls)]
	clear(calls)
	st.calls = calls[:0]
	statePool.Put(st)
}
