package aos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
)

// TestServeHTTPHeaders checks the headers of each kind of answer: the
// length is the body's, the type JSON; a notification has neither.
func TestServeHTTPHeaders(t *testing.T) {
	h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"ping", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, http.StatusOK},
		{"step", `{"jsonrpc":"2.0","id":"a","method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":["x"]}}`, http.StatusOK},
		{"parse error", `{"jsonrpc"`, http.StatusOK},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, http.StatusOK},
		{"notification", `{"jsonrpc":"2.0","method":"ping"}`, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/aos", bytes.NewReader([]byte(tc.body))))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			ct, cl := rec.Header().Get("Content-Type"), rec.Header().Get("Content-Length")
			if tc.status == http.StatusNoContent {
				if ct != "" || cl != "" || rec.Body.Len() != 0 {
					t.Fatalf("204 with Content-Type %q, Content-Length %q, body %q", ct, cl, rec.Body.Bytes())
				}
				return
			}
			if ct != "application/json" || cl != strconv.Itoa(rec.Body.Len()) || !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("Content-Type %q, Content-Length %q, body (%d bytes) %q", ct, cl, rec.Body.Len(), rec.Body.Bytes())
			}
		})
	}
}

// TestServeHTTPConcurrentPools serves many requests at once, each with its
// own id and memory: every answer must echo its own request (the parse
// states and the response buffers are pooled, so a buffer or a scratch
// stack shared by two requests would mix them up), and the events must
// keep their payloads after their states went back to the pool.
func TestServeHTTPConcurrentPools(t *testing.T) {
	rec := &recorder{}
	h := NewHandler(pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "rec", Handler: rec})}),
		Options{Logf: func(string, ...any) {}})
	const workers, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				body := `{"jsonrpc":"2.0","id":"` + id + `","method":"steps/memoryStore","params":{` + ctxJSON +
					`,"memory":["` + id + `"],"n":` + strconv.Itoa(i) + `}}`
				if i%3 == 0 { // a batch now and then, so batches and single requests share the pools
					body = "[" + body + `,{"jsonrpc":"2.0","id":"` + id + `-ping","method":"ping"}]`
				}
				resp := httptest.NewRecorder()
				h.ServeHTTP(resp, httptest.NewRequest(http.MethodPost, "/aos", bytes.NewReader([]byte(body))))
				if !bytes.Contains(resp.Body.Bytes(), []byte(`"id":"`+id+`"`)) || !bytes.Contains(resp.Body.Bytes(), []byte(`"decision":"allow"`)) {
					errs <- fmt.Errorf("request %s answered %s", id, resp.Body.Bytes())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) != workers*each {
		t.Fatalf("%d events, want %d", len(rec.evs), workers*each)
	}
	for _, ev := range rec.evs {
		mem, _ := ev.Payload["memory"].([]any)
		var i int
		fmt.Sscanf(ev.RequestID[bytes.IndexByte([]byte(ev.RequestID), '-')+1:], "%d", &i)
		if len(mem) != 1 || mem[0] != ev.RequestID || ev.Payload["n"] != float64(i) {
			t.Fatalf("event %s has memory %#v, n %#v", ev.RequestID, ev.Payload["memory"], ev.Payload["n"])
		}
	}
}
