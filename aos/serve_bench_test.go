package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// benchRequest is the request bench/compare.sh sends to /aos.
const benchRequest = "../bench/requests/tool_call.json"

// discardWriter is an http.ResponseWriter that keeps the status and the
// length of the body and reuses its header map, so a benchmark counts the
// handler's allocations and not the recorder's.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(b)
	return len(b), nil
}

// BenchmarkServeHTTP measures one HTTP decision end to end in process:
// Handler.ServeHTTP reading the body of bench/requests/tool_call.json
// (steps/toolCallRequest, the request bench/compare.sh sends), parsing and
// validating it, building the event, deciding it with a no-store Decider
// (one allow guardian, catalog.Views) and writing the answer. allocs/op is
// the allocations per HTTP decision of everything but the policies and the
// trace. The request and the writer are reused across iterations (only the
// body reader is reset), so net/http's own per-request costs are not counted.
func BenchmarkServeHTTP(b *testing.B) {
	body, err := os.ReadFile(filepath.FromSlash(benchRequest))
	if err != nil {
		b.Fatal(err)
	}
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "allow",
		Handler: fixed(warden.Decision{Verdict: warden.Allow})}), Views: catalog.Views})
	h := NewHandler(d, Options{})

	// Once through httptest, checking the answer, so the benchmark fails
	// if the endpoint stops answering allow.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/aos", bytes.NewReader(body)))
	var resp struct {
		Result struct{ Decision string } `json:"result"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &resp) != nil || resp.Result.Decision != "allow" {
		b.Fatalf("status %d, body %s: want 200 and an allow", rec.Code, rec.Body.Bytes())
	}

	rd := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, "/aos", rd)
	req.Body = io.NopCloser(rd)
	req = req.WithContext(context.Background())
	w := &discardWriter{h: make(http.Header)}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rd.Reset(body)
		w.status, w.n = 0, 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK || w.n == 0 {
			b.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
}
