package a2agate

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/pipeline"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// BenchmarkProxy measures one message/send answered as JSON and one
// message/stream answered with 10 SSE events, through the proxy deciding
// with the built-in pack into the in-memory trace. The upstream answers
// from memory, so what is measured is the proxy: the upstream call, the
// read of its answer and the relay of each event with its decision.
func BenchmarkProxy(b *testing.B) {
	const events = 10
	answer := `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"echo: hello"}]}}`
	var stream strings.Builder
	for i := range events {
		fmt.Fprintf(&stream, ": keep-alive\n\nid: %d\ndata: %s\n\n", i, answer)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"message/stream"`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream.String())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	b.Cleanup(up.Close)
	set, err := policy.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: policy.NewEngine(set, policy.Options{})}),
		Views: catalog.Views, Store: storetest.NewMem()})
	front := httptest.NewServer(New(dec, map[string]warden.Upstream{"echo": {URL: up.URL}}, Options{}))
	b.Cleanup(front.Close)
	for _, c := range []struct{ name, method, want string }{
		{"send", "message/send", `"echo: hello"`},
		{"stream-10", "message/stream", "id: 9\n"},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Post(front.URL+"/a2a/echo", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(got), c.want) {
					b.Fatalf("%s: %s", c.name, got)
				}
			}
		})
	}
}
