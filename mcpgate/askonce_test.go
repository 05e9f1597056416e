package mcpgate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval/approvaltest"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
	"github.com/wardenhq/warden/storetest"
)

// askEcho is an ask written the natural way: the tool, no direction. The
// answer to the call carries the call's tool view, so without the cover
// it would ask again for the answer.
const askEcho = `
id: ask-echo
version: "1"
events: ["protocols/MCP"]
when: 'tool.name == "echo"'
decision: ask
reason: echo needs approval
`

// askEchoAnswers asks about the answers of echo too, on purpose.
const askEchoAnswers = `
---
id: ask-echo-answers
version: "1"
events: ["protocols/MCP"]
when: 'tool.name == "echo" && direction == "inbound"'
decision: ask
reason: echo's answers need their own approval
`

// askOnceCore is a Guardian with approvals deciding with the policies in
// src, and an approver approving whatever it asks.
func askOnceCore(t *testing.T, src string) (approvaltest.Core, *storetest.Mem, *approvaltest.Approver) {
	t.Helper()
	core, st := approvaltest.NewCore(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return core, st, approvaltest.ApproveAll(ctx, core.M, "ops")
}

// askOnceClient connects the official Go SDK client to the gateway under
// test: through /mcp/{server} (JSON or SSE answers) or the stdio gateway.
func askOnceClient(t *testing.T, core approvaltest.Core, transport string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, _ := mcpserver.New()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil)
	var cs *mcp.ClientSession
	var err error
	switch transport {
	case "stdio":
		c2gR, c2gW := io.Pipe()
		g2cR, g2cW := io.Pipe()
		g2sR, g2sW := io.Pipe()
		s2gR, s2gW := io.Pipe()
		t.Cleanup(func() {
			for _, c := range []io.Closer{c2gR, c2gW, g2cR, g2cW, g2sR, g2sW, s2gR, s2gW} {
				c.Close()
			}
		})
		ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: g2sR, Writer: s2gW}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		gw := NewStdio(core, StdioOptions{Server: "testserver", Logf: testLogf(t)})
		go func() { _ = gw.Run(ctx, c2gR, g2cW, s2gR, g2sW) }()
		cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: g2cR, Writer: c2gW}, nil)
	default:
		up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{JSONResponse: transport == "http-json"}))
		t.Cleanup(up.Close)
		gw := NewHTTP(core, map[string]warden.Upstream{"test": {Name: "test", URL: up.URL}},
			HTTPOptions{Timeout: 10 * time.Second, Logf: t.Logf})
		front := httptest.NewServer(gw)
		t.Cleanup(front.Close)
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front.URL + "/mcp/test", MaxRetries: -1}, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// One approval covers a call and its answer: the official Go SDK client's
// call through either MCP gateway asks once, is answered, and the answer's
// record says the approval covered it. A policy that chose the inbound
// direction asks again, and only it.
func TestAskOnce(t *testing.T) {
	for _, transport := range []string{"http-sse", "http-json", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			core, st, appr := askOnceCore(t, askEcho)
			cs := askOnceClient(t, core, transport)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil {
				t.Fatalf("the approved call failed: %v", err)
			}
			if got := textOf(t, res); got != "echo: hi" {
				t.Fatalf("result %q", got)
			}
			if got := appr.Approved(); len(got) != 1 || got[0].PolicyID != "ask-echo" {
				t.Fatalf("approvals %+v, want one, of ask-echo", got)
			}
			var answer *audit.Record
			for _, r := range st.Records() {
				if r.Direction == warden.Inbound && r.Tool == "echo" {
					answer = &r
				}
			}
			if answer == nil || answer.Decision != "allow" || !slices.Contains(answer.ReasonCodes, warden.CodeApprovalCovered) {
				t.Fatalf("the answer's record: %+v", answer)
			}
		})
	}
	t.Run("inbound asks again", func(t *testing.T) {
		core, _, appr := askOnceCore(t, askEcho+askEchoAnswers)
		cs := askOnceClient(t, core, "http-sse")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatalf("call: %v", err)
		}
		var ids []string
		for _, a := range appr.Approved() {
			ids = append(ids, a.PolicyID)
		}
		if !slices.Equal(ids, []string{"ask-echo", "ask-echo-answers"}) {
			t.Fatalf("approvals of %v, want the call's and then the answer's own", ids)
		}
	})
}
