package aos

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// setKey is a guardian that modifies the payload: it sets payload[key] = value
// (and checks the views were rebuilt from the new payload).
func setKey(key string, value any) warden.Handler {
	return warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		p := payload.Clone(ev.Payload)
		p[key] = value
		return warden.Decision{Verdict: warden.Modify, Payload: p, Reason: "set " + key}, nil
	})
}

// TestModifiedRequestShape checks that a changed payload goes back where it
// came from, in the same shape, inside the whole request.
func TestModifiedRequestShape(t *testing.T) {
	cases := []struct {
		name, body string
		guard      warden.Handler
		want       string // the expected modifiedRequest
	}{
		{"step: params", `{"jsonrpc":"2.0","id":1,"method":"steps/memoryStore","params":{"memory":["a@b.io"],"context":{}}}`,
			setKey("memory", []any{"[REDACTED:email]"}),
			`{"jsonrpc":"2.0","id":1,"method":"steps/memoryStore","params":{"context":{},"memory":["[REDACTED:email]"]}}`},
		{"toolCallResult: flat stays flat", `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallResult","params":{"executionId":"e","result":{"outputs":[],"isError":false},"context":{}}}`,
			setKey("result", map[string]any{"outputs": []any{map[string]any{"kind": "text", "text": "x"}}, "isError": true}),
			`{"jsonrpc":"2.0","id":1,"method":"steps/toolCallResult","params":{"context":{},"executionId":"e","result":{"isError":true,"outputs":[{"kind":"text","text":"x"}]}}}`},
		{"MCP: params.message", `{"jsonrpc":"2.0","id":"a","method":"protocols/MCP","params":{"message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}},"reasoning":"r"}}`,
			setKey("params", map[string]any{"name": "y"}),
			`{"jsonrpc":"2.0","id":"a","method":"protocols/MCP","params":{"message":{"id":3,"jsonrpc":"2.0","method":"tools/call","params":{"name":"y"}},"reasoning":"r"}}`},
		{"MCP: params itself", `{"jsonrpc":"2.0","id":"a","method":"protocols/MCP","params":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}}`,
			setKey("params", map[string]any{"name": "y"}),
			`{"jsonrpc":"2.0","id":"a","method":"protocols/MCP","params":{"id":3,"jsonrpc":"2.0","method":"tools/call","params":{"name":"y"}}}`},
		{"A2A hook: params.payload", `{"jsonrpc":"2.0","id":"a","method":"tasks/cancel","params":{"payload":{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"t1"}},"context":{"from":{"role":"client"}}}}`,
			setKey("params", map[string]any{"id": "t2"}),
			`{"jsonrpc":"2.0","id":"a","method":"tasks/cancel","params":{"context":{"from":{"role":"client"}},"payload":{"id":3,"jsonrpc":"2.0","method":"tasks/cancel","params":{"id":"t2"}}}}`},
		{"A2A hook: the request itself", `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
			setKey("params", map[string]any{"message": map[string]any{"role": "user", "parts": []any{map[string]any{"kind": "text", "text": "[x]"}}}}),
			`{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"parts":[{"kind":"text","text":"[x]"}],"role":"user"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, st := newTestHandler(tc.guard)
			resp := h.Handle(context.Background(), []byte(tc.body))
			var r struct {
				Result struct {
					Decision        string
					ModifiedRequest json.RawMessage
				}
			}
			if err := json.Unmarshal(resp, &r); err != nil || r.Result.Decision != "modify" {
				t.Fatalf("response %s (%v)", resp, err)
			}
			if string(r.Result.ModifiedRequest) != tc.want {
				t.Errorf("modifiedRequest\n got %s\nwant %s", r.Result.ModifiedRequest, tc.want)
			}
			if rec := st.Records()[0]; len(rec.Output) == 0 {
				t.Error("trace record has no output")
			}
		})
	}
}

// TestNormalizeAfterModify: a guardian after a modify sees views rebuilt
// from the changed payload.
func TestNormalizeAfterModify(t *testing.T) {
	rec := &recorder{}
	rename := warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		p := payload.Clone(ev.Payload)
		p["message"].(map[string]any)["content"] = []any{map[string]any{"kind": "text", "text": "rewritten"}}
		return warden.Decision{Verdict: warden.Modify, Payload: p}, nil
	})
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow,
		warden.Step{Name: "rewrite", Handler: rename}, warden.Step{Name: "rec", Handler: rec}), Views: catalog.Views, Store: storetest.NewMem()})
	h := NewHandler(d, Options{})
	h.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"steps/message","params":{`+ctxJSON+`,"message":{"role":"user","content":[{"kind":"text","text":"original"}]}}}`))
	ev := rec.last()
	if ev.Message.Text != "rewritten" || ev.Message.Role != "user" || ev.Agent.ID != "a1" || ev.SessionID != "s1" {
		t.Errorf("views after modify: %+v %+v %q", ev.Message, ev.Agent, ev.SessionID)
	}
}
