package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/jsonrpc"
)

// batchOf returns a batch of n copies of entry.
func batchOf(entry string, n int) []byte {
	var b bytes.Buffer
	b.Grow(n*(len(entry)+1) + 2)
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(entry)
	}
	b.WriteByte(']')
	return b.Bytes()
}

const pingEntry = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// TestBatchLimit: a batch of limits.batch entries is answered; one more is
// refused whole with -32600 naming the limit, and nothing is decided.
func TestBatchLimit(t *testing.T) {
	rec := &recorder{}
	h, st := newTestHandler(rec)
	h.opts.MaxBatch = 5
	entry := `{"jsonrpc":"2.0","id":1,"method":"steps/message","params":{"message":{"role":"user","content":"hi"}}}`

	var ok []map[string]any
	if err := json.Unmarshal(h.Handle(context.Background(), batchOf(entry, 5)), &ok); err != nil || len(ok) != 5 {
		t.Fatalf("a batch at the limit: %v, %d answers", err, len(ok))
	}
	before := len(st.Records())
	resp := h.Handle(context.Background(), batchOf(entry, 6))
	var e struct {
		Error Error `json:"error"`
	}
	if err := json.Unmarshal(resp, &e); err != nil {
		t.Fatalf("%v: %s", err, resp)
	}
	if e.Error.Code != CodeInvalidRequest || !strings.Contains(e.Error.Message, "limit of 5 entries (limits.batch)") {
		t.Fatalf("got %s", resp)
	}
	if n := len(st.Records()) - before; n != 0 {
		t.Fatalf("%d entries of a refused batch were decided", n)
	}
	// The text after the entry past the limit is not read: even garbage there
	// is the batch limit, not a parse error.
	if resp := h.Handle(context.Background(), append(batchOf(entry, 6)[:len(batchOf(entry, 6))-1], []byte(",}}}")...)); !bytes.Contains(resp, []byte("limits.batch")) {
		t.Fatalf("got %s", resp)
	}
}

// TestBatchAttackMemory is the measured attack of issue 8: 2,000,000 × `1`
// in 4 MB built a 232 MB response and ~1 GB RSS. Now it is refused while
// parsing entry 1001: the heap allocated to answer it (runtime.MemStats
// TotalAlloc, in this process) stays under 1 MiB. The whole-binary peak
// RSS under the same attack is e2e.TestBatchAttackRSS.
func TestBatchAttackMemory(t *testing.T) {
	h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	body := batchOf("1", 2_000_000)
	if len(body) > int(jsonrpc.DefaultMaxBody) {
		t.Fatalf("attack body %d bytes, over the body limit", len(body))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := h.Handle(context.Background(), body)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("answered %d bytes, allocated %d KiB: %s", len(resp), alloc>>10, resp)
	if !bytes.Contains(resp, []byte(`"code":-32600`)) || !bytes.Contains(resp, []byte("limit of 1000 entries")) {
		t.Fatalf("got %s", resp)
	}
	if alloc > 1<<20 {
		t.Fatalf("allocated %d KiB to refuse the batch, want < 1 MiB", alloc>>10)
	}
}

// TestResponseLimit: a batch whose answers grow past limits.response_bytes
// is answered with one -32600 error, not the whole response.
func TestResponseLimit(t *testing.T) {
	h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	h.opts.MaxResponse = 2048
	small := h.Handle(context.Background(), batchOf(pingEntry, 5))
	if !bytes.HasPrefix(small, []byte("[")) {
		t.Fatalf("a small batch: %s", small)
	}
	resp := h.Handle(context.Background(), batchOf(pingEntry, 200))
	if len(resp) > 2048 || !bytes.Contains(resp, []byte(`"code":-32600`)) || !bytes.Contains(resp, []byte("limits.response_bytes")) {
		t.Fatalf("got %d bytes: %.300s", len(resp), resp)
	}
	t.Logf("%s", resp)
}
