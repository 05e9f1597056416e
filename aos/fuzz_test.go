package aos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// fuzzSeeds are the seed examples plus hand-picked error and edge cases.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(``), []byte(`{`), []byte(`[]`), []byte(`[1,{}]`), []byte(`null`),
		[]byte(`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`),
		[]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","method":"steps/message","params":"hi"}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/foo","params":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/message","params":{` + ctxJSON + `,"message":{"role":"user","content":[{"kind":"text","text":"a\u00e9\ud83d\ude00\ud800"}]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"protocols/MCP","params":{"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"protocols/A2A","params":{"jsonrpc":"2.0","id":1,"result":{"role":"agent","parts":[]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"payload":{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}},"context":{"from":{"agent":{"name":"n"}}}}}`),
		[]byte(`[{"jsonrpc":"2.0","method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":["x"]}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/toolCallResult","params":{` + ctxJSON + `,"executionId":"e","result":{"outputs":[],"isError":false}}}`),
		[]byte(`{"a":1,"a":2}`), []byte(`{"p":{"Name":1,"name":2}}`), []byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`),
		[]byte("{\"a\":\"\xff\"}"), []byte(`[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`), []byte(`{"a":1e999}`),
	}
	if os.Getenv("WARDEN_SHARED") == "" {
		return seeds // fuzz from the hand-picked seeds alone; never skip
	}
	for _, ex := range loadExamples(t) {
		seeds = append(seeds, ex.body)
	}
	return seeds
}

// verdictFor picks a decision from the event, so fuzzing covers allow,
// deny and modify (with the payload put back into the request).
func verdictFor(ev *warden.Event) warden.Decision {
	switch len(ev.Raw) % 3 {
	case 0:
		return warden.Decision{Verdict: warden.Deny, Reason: "r", PolicyID: "p"}
	case 1:
		p := payload.Clone(ev.Payload)
		p["fuzz"] = "\x00<&>\u2028"
		return warden.Decision{Verdict: warden.Modify, Payload: p}
	}
	return warden.Decision{Verdict: warden.Allow}
}

// FuzzDecode runs the whole request path (parse, decode, event, decision,
// response encoding) on arbitrary bodies: it must not panic (the handler's
// recover would turn a panic into -32603, which the fuzzer reports), and
// every response must be valid JSON.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	guard := warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		return verdictFor(ev), nil
	})
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "fuzz", Handler: guard}), Views: catalog.Views})
	// One handler for all inputs (a worker runs them one at a time): its
	// correlation caches persist across inputs, as in a server.
	var panicked string
	h := NewHandler(d, Options{Logf: func(format string, args ...any) { panicked = fmt.Sprintf(format, args...) }})
	f.Fuzz(func(t *testing.T, body []byte) {
		panicked = ""
		resp := h.Handle(context.Background(), body)
		if panicked != "" {
			t.Fatalf("endpoint panicked on %q: %s", body, panicked)
		}
		if resp == nil {
			return
		}
		if !json.Valid(resp) {
			t.Fatalf("invalid JSON response %q for %q", resp, body)
		}
		if c := resp[0]; c != '{' && c != '[' {
			t.Fatalf("response is not an object or array: %q", resp)
		}
	})
}

// TestFuzzCorpus writes the seeds to testdata/fuzz/FuzzDecode with -update,
// so `go test -fuzz` starts from them and plain `go test` replays them.
func TestFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	os.MkdirAll(dir, 0o755)
	for i, s := range fuzzSeeds(t) {
		data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%02d", i)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
