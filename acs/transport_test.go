package acs

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/acsclient"
)

// TestStdio: a whole session over the Content-Length framing, answers
// verified by the independent client.
func TestStdio(t *testing.T) {
	f := newFixture(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- f.h.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	c := acsclient.NewStdio(outR, inW, acsclient.Options{KeyID: "k1", Key: testKey, AgentID: "stdio-agent",
		Now: func() time_ { return f.now }})
	ctx := context.Background()
	hello, err := c.Handshake(ctx, []string{"steps/toolCallRequest", "steps/sessionEnd"})
	if err != nil || hello.Error != nil || hello.Result["selected_transport"] != "stdio" {
		t.Fatalf("handshake: %v %s", err, hello.Raw)
	}
	for _, tc := range []struct{ cmd, want string }{{"ls", "allow"}, {"rm -rf /", "deny"}} {
		r, err := c.Call(ctx, "steps/toolCallRequest", toolCall("Bash", map[string]any{"command": tc.cmd}))
		if err != nil || r.Decision() != tc.want {
			t.Fatalf("%s: %v %s", tc.cmd, err, r.Raw)
		}
		if err := c.VerifyResponse(r); err != nil {
			t.Fatalf("%s: %v", tc.cmd, err)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
}

// TestStdioFrames: a frame without Content-Length, or over the limit, is
// answered with an error and ends the stream; EOF ends it quietly.
func TestStdioFrames(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxBody = 64 })
	for _, c := range []struct{ name, in, answer string }{
		{"eof", "", ""},
		{"no length", "X-Other: 1\r\n\r\n{}", `"code":-32600`},
		{"over the limit", "Content-Length: 65\r\n\r\n" + strings.Repeat(" ", 65), `"code":-32600`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := f.h.ServeStdio(context.Background(), strings.NewReader(c.in), &out)
			if (c.answer == "") != (err == nil) || !strings.Contains(out.String(), c.answer) {
				t.Fatalf("err %v, out %q", err, out.String())
			}
		})
	}
}

// TestBatch: elements answered independently, in order.
func TestBatch(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	s.hello()
	a := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
	b := s.msg("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "rm -rf /"}), nil)
	body, _ := jsonMarshal([]any{a, b, a})
	var out []map[string]any
	if err := jsonUnmarshal(f.h.Handle(context.Background(), body, "http"), &out); err != nil || len(out) != 3 {
		t.Fatalf("%v %v", err, out)
	}
	if result(t, out[0])["decision"] != "allow" || result(t, out[1])["decision"] != "deny" || errCode(out[2]) != CodeReplayDetected {
		t.Fatalf("batch answers %v", out)
	}
}

// FuzzHandle: no input crashes the handler or goes unanswered.
func FuzzHandle(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"system/ping","params":{}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"acs_version":"0.1.0","request_id":"6a3b5e0e-51c5-4c7e-9d2a-1f0f5f2a9b10","timestamp":"2026-01-01T00:00:00Z","metadata":{"agent_id":"a","session_id":"s"},"payload":{"tool":{"name":"x"},"arguments":{"a":{"value":[1,{"b":null}]}}}}}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"protocols/MCP/tools/call","params":{"payload":{"jsonrpc":"2.0"}}}`))
	fx := newFixture(f, nil) // one Guardian for every input
	f.Fuzz(func(t *testing.T, body []byte) {
		out := fx.h.Handle(context.Background(), body, "http")
		if len(out) == 0 || (out[0] != '{' && out[0] != '[') {
			t.Fatalf("answer %q", out)
		}
	})
}
