package mcpgate

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden"
)

// batchOf returns a batch of n copies of entry.
func batchOf(entry string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + "]"
}

const pingReq = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// TestHTTPBatchLimit: a client batch over limits.batch is refused whole
// with -32600 naming the limit; nothing is decided or reaches the upstream.
// The attack (2,000,000 × 1 in 4 MB) is refused the same way.
func TestHTTPBatchLimit(t *testing.T) {
	var reached atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bytes.ReplaceAll(body, []byte(`"method":"ping"`), []byte(`"result":{}`)))
	}))
	defer up.Close()
	dec, st := testDecider(t)
	gw := NewHTTP(dec, map[string]warden.Upstream{"up": {URL: up.URL}}, HTTPOptions{MaxBatch: 3})
	front := httptest.NewServer(gw)
	defer front.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(front.URL+"/mcp/up", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(batchOf(pingReq, 3)); code != 200 || reached.Load() != 1 {
		t.Fatalf("a batch at the limit: %d %s (upstream reached %d times)", code, body, reached.Load())
	}
	records := len(st.Records())
	for _, body := range []string{batchOf(pingReq, 4), batchOf("1", 2_000_000)} {
		code, resp := post(body)
		if code != http.StatusBadRequest || !strings.Contains(resp, `"code":-32600`) || !strings.Contains(resp, "limit of 3 entries (limits.batch)") {
			t.Fatalf("got %d %s", code, resp)
		}
	}
	if reached.Load() != 1 || len(st.Records()) != records {
		t.Fatalf("a refused batch reached the upstream (%d) or was decided (%d records)", reached.Load(), len(st.Records())-records)
	}
}

// TestStdioBatchLimit: the stdio gateway refuses a client batch line over
// the limit the same way, without forwarding anything.
func TestStdioBatchLimit(t *testing.T) {
	dec, st := testDecider(t)
	s := NewStdio(dec, StdioOptions{Server: "s", MaxBatch: 2})
	var toClient, toServer bytes.Buffer
	s.client, s.server = &lineWriter{w: &toClient}, &lineWriter{w: &toServer}
	if err := s.fromClientLine(context.Background(), []byte(batchOf(pingReq, 3)), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(toClient.String(), `"code":-32600`) || !strings.Contains(toClient.String(), "limit of 2 entries") {
		t.Fatalf("client got %s", toClient.String())
	}
	if toServer.Len() != 0 || len(st.Records()) != 0 {
		t.Fatalf("forwarded %q, %d records", toServer.String(), len(st.Records()))
	}
}
