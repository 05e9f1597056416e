package mcpgate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

// stdioEnv is a go-sdk client talking to the go-sdk test server through the
// stdio gateway core, over pipes.
type stdioEnv struct {
	cs     *mcp.ClientSession
	seen   *mcpserver.Seen
	store  *memStore
	gw     *Stdio
	runErr chan error
}

func startStdio(t *testing.T, protocol string, copts *mcp.ClientOptions, roots ...*mcp.Root) *stdioEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dec, st := testDecider(t)
	c2gR, c2gW := io.Pipe()
	g2cR, g2cW := io.Pipe()
	g2sR, g2sW := io.Pipe()
	s2gR, s2gW := io.Pipe()
	srv, seen := mcpserver.New()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: g2sR, Writer: s2gW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw := NewStdio(dec, StdioOptions{Server: "testserver", Logf: testLogf(t)})
	e := &stdioEnv{seen: seen, store: st, gw: gw, runErr: make(chan error, 1)}
	go func() { e.runErr <- gw.Run(ctx, c2gR, g2cW, s2gR, g2sW) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, copts)
	client.AddRoots(roots...)
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	e.cs, err = client.Connect(cctx, &mcp.IOTransport{Reader: g2cR, Writer: c2gW}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.cs.Close()
		ss.Close()
		cancel()
		for _, c := range []io.Closer{c2gR, c2gW, g2cR, g2cW, g2sR, g2sW, s2gR, s2gW} {
			c.Close()
		}
	})
	return e
}

// protocols are the MCP versions the scenarios run under: the go-sdk's latest
// (2026-07-28, where a server may not send requests while serving one) and
// 2025-11-25 (server-initiated sampling and roots during a tool call).
var protocols = []string{"", "2025-11-25"}

func TestStdioScenarios(t *testing.T) {
	for _, pv := range protocols {
		t.Run("protocol="+pv, func(t *testing.T) { stdioScenarios(t, pv) })
	}
}

func stdioScenarios(t *testing.T, pv string) {
	var progress atomic.Int32
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "model says hi"}, Model: "m", Role: "assistant"}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	}
	e := startStdio(t, pv, opts, &mcp.Root{URI: "file:///work/project"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("tools/list hides secret_tool", func(t *testing.T) {
		r, err := e.cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Join(toolNames(r), ",")
		if strings.Contains(names, "secret_tool") || !strings.Contains(names, "echo") {
			t.Fatalf("tools = %s", names)
		}
	})

	calls := []struct {
		name     string
		tool     string
		args     map[string]any
		want     string // substring of the result text
		wantCode int64  // JSON-RPC error code, 0 for a result
		reached  int    // times the server must have seen the tool afterwards
		oldOnly  bool   // server-initiated requests during a call: not in 2026-07-28
	}{
		{"allowed call", "echo", map[string]any{"text": "hello"}, "echo: hello", 0, 1, false},
		{"denied call", "wire_money", map[string]any{"text": "1000"}, "denied by warden: wire transfers need approval", CodeDenied, 0, false},
		{"hidden tool call", "secret_tool", nil, "secret_tool is not available", CodeDenied, 0, false},
		{"redacted result", "contact", nil, "reach alice at [REDACTED:email]", 0, 1, false},
		{"large result (3 MiB)", "big", map[string]any{"n": 3 << 20}, strings.Repeat("x", 100), 0, 1, false},
		{"server-initiated sampling", "sample", map[string]any{"text": "hello model"}, "sampled: model says hi", 0, 1, true},
		{"denied sampling request", "sample", map[string]any{"text": "forbidden topic"}, "denied by warden: sampling request refused", 0, 2, true},
		{"server-initiated roots", "roots", nil, "roots: file:///work/project", 0, 1, true},
	}
	for _, c := range calls {
		if c.oldOnly && pv == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if c.wantCode != 0 {
				if err == nil {
					t.Fatalf("want error %d, got %+v", c.wantCode, r)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q, want %q", err, c.want)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if got := textOf(t, r); !strings.Contains(got, c.want) {
					if len(got) > 200 {
						got = got[:200] + "..."
					}
					t.Fatalf("result %q, want %q", got, c.want)
				}
			}
			if n := e.seen.Count(c.tool); n != c.reached {
				t.Fatalf("server saw %s %d times, want %d", c.tool, n, c.reached)
			}
		})
	}

	t.Run("progress notifications pass", func(t *testing.T) { checkProgress(t, ctx, e.cs, map[string]any{"ms": 1}, &progress) })

	t.Run("cancellation passes", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}}
		p.SetProgressToken("tok-2")
		done := make(chan error, 1)
		go func() { _, err := e.cs.CallTool(cctx, p); done <- err }()
		for e.seen.Count("slow") < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		ccancel()
		if err := <-done; err == nil {
			t.Fatal("cancelled call returned no error")
		}
		deadline := time.Now().Add(5 * time.Second)
		for e.seen.Count("slow:cancelled") == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if e.seen.Count("slow:cancelled") == 0 {
			t.Fatal("the server never saw the cancellation")
		}
		if len(findRecords(e.store, "notifications/cancelled")) == 0 {
			t.Fatal("the cancellation was not recorded")
		}
	})

	t.Run("trace", func(t *testing.T) {
		recs := e.store.Records()
		dirs := map[string]int{}
		for _, r := range recs {
			if r.Surface != warden.SurfaceMCP || r.Event != EventName || r.SessionID != e.gw.SessionID() {
				t.Fatalf("record %+v", r)
			}
			dirs[r.Direction]++
		}
		if dirs[warden.Outbound] == 0 || dirs[warden.Inbound] == 0 {
			t.Fatalf("directions %v", dirs)
		}
		var deny []audit.Record
		for _, r := range findRecords(e.store, `"name":"wire_money","arguments"`) {
			if r.Direction == warden.Outbound {
				deny = append(deny, r)
			}
		}
		if len(deny) != 1 || deny[0].Decision != "deny" || deny[0].PolicyID != "deny-wire-money" {
			t.Fatalf("wire_money records %+v", deny)
		}
		// The result of contact was decided with the tool view of its request.
		var redacted bool
		for _, r := range findRecords(e.store, "alice@example.com") {
			redacted = redacted || (r.Decision == "modify" && r.PolicyID == "redact-contact-emails")
		}
		if !redacted {
			t.Fatal("contact result was not modified by its tool policy")
		}
	})
}

// rawEnv runs the gateway between raw pipes: the test speaks JSON lines as
// both the client and the server.
type rawEnv struct {
	toGW     io.WriteCloser // client → gateway
	fromGW   chan []byte    // gateway → client, line by line
	srvIn    chan []byte    // gateway → server
	srvOut   io.WriteCloser // server → gateway
	store    *memStore
	runErr   chan error
	closeAll func()
}

func startRaw(t *testing.T, max int) *rawEnv {
	t.Helper()
	dec, st := testDecider(t)
	c2gR, c2gW := io.Pipe()
	g2cR, g2cW := io.Pipe()
	g2sR, g2sW := io.Pipe()
	s2gR, s2gW := io.Pipe()
	gw := NewStdio(dec, StdioOptions{Server: "raw", MaxLine: max, Logf: testLogf(t)})
	e := &rawEnv{toGW: c2gW, fromGW: pump(g2cR), srvIn: pump(g2sR), srvOut: s2gW, store: st, runErr: make(chan error, 1)}
	go func() { e.runErr <- gw.Run(context.Background(), c2gR, g2cW, s2gR, g2sW) }()
	e.closeAll = func() {
		for _, c := range []io.Closer{c2gR, c2gW, g2cR, g2cW, g2sR, g2sW, s2gR, s2gW} {
			c.Close()
		}
	}
	t.Cleanup(e.closeAll)
	return e
}

// testLogf logs through t until the test ends. Run returns when one side
// ends while the other side's reader may still be draining a line, so the
// gateway can log after the test is over; t.Logf then would race.
func testLogf(t *testing.T) func(string, ...any) {
	var mu sync.Mutex
	ended := false
	t.Cleanup(func() { mu.Lock(); ended = true; mu.Unlock() })
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			t.Logf(format, args...)
		}
	}
}

func writeLine(t *testing.T, w io.Writer, s string) {
	t.Helper()
	go func() { _, _ = io.WriteString(w, s+"\n") }() // pipes block until read
}

// pump reads lines from r into a channel, so the gateway never blocks on a
// side the test is not reading yet (real pipes have buffers; io.Pipe has not).
func pump(r io.Reader) chan []byte {
	ch := make(chan []byte, 100)
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				close(ch)
				return
			}
			ch <- l
		}
	}()
	return ch
}

// readMsg reads one JSON line (with a deadline).
func readMsg(t *testing.T, ch chan []byte) map[string]any {
	t.Helper()
	select {
	case line, ok := <-ch:
		if !ok {
			t.Fatal("stream closed")
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON object: %q", line)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for a message")
	}
	return nil
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestStdioEdgeCases(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 2<<20) + `"}}}`
	cases := []struct {
		name       string
		client     string   // line the client sends
		server     []string // lines the server answers with, after reading what it expects
		srvSees    []string // substrings of the lines the server must receive, in order
		clientGets []string // per message the client receives: "code:N", "id:N" (a result) or substring
	}{
		{name: "malformed client line", client: `{"jsonrpc": "2.0", "id": 1, "method": `, clientGets: []string{"code:-32700"}},
		{name: "not a JSON-RPC message", client: `{"hello": 1, "id": 4}`, clientGets: []string{"code:-32600"}},
		{name: "JSON that is not an object", client: `42`, clientGets: []string{"code:-32600"}},
		{name: "empty batch", client: `[]`, clientGets: []string{"code:-32600"}},
		{name: "line over the limit", client: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("z", 5<<20) + `"}}`,
			clientGets: []string{"code:-32600"}},
		{name: "batch split and each decided",
			client:     `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wire_money"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}},{"jsonrpc":"2.0","method":"notifications/blocked"},{"jsonrpc":"2.0","method":"notifications/ok"}]`,
			srvSees:    []string{`"id":2`, `notifications/ok`},
			server:     []string{`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a"}]}}`},
			clientGets: []string{"code:-31900", "id:2"}},
		{name: "large message (2 MiB) passes", client: big, srvSees: []string{`"id":9`},
			server: []string{`{"jsonrpc":"2.0","id":9,"result":{}}`}, clientGets: []string{"id:9"}},
		{name: "garbage from the server is dropped",
			client:     `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
			srvSees:    []string{`"id":3`},
			server:     []string{`not json at all`, `{"no":"rpc"}`, `{"jsonrpc":"2.0","id":3,"result":{}}`},
			clientGets: []string{"id:3"}},
		{name: "denied inbound response becomes an error for its id",
			client:     `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
			srvSees:    []string{`"id":5`},
			server:     []string{`{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"t","description":"POISONED"}]}}`},
			clientGets: []string{"code:-31900"}},
		{name: "denied server request is answered to the server",
			client:     `{"jsonrpc":"2.0","id":6,"method":"ping"}`,
			srvSees:    []string{`"id":6`},
			server:     []string{`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"forbidden"}}]}}`, `{"jsonrpc":"2.0","id":6,"result":{}}`},
			clientGets: []string{"id:6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := startRaw(t, 4<<20)
			writeLine(t, e.toGW, c.client)
			for _, want := range c.srvSees {
				m := readMsg(t, e.srvIn)
				b, _ := json.Marshal(m)
				if !strings.Contains(string(b), want) {
					t.Fatalf("server got %.200s, want %q", b, want)
				}
			}
			for _, l := range c.server {
				writeLine(t, e.srvOut, l)
			}
			if c.name == "denied server request is answered to the server" {
				m := readMsg(t, e.srvIn)
				if m["id"] != "s1" || errCode(m) != CodeDenied {
					t.Fatalf("server got %v, want the CodeDenied error for s1", m)
				}
			}
			for _, want := range c.clientGets {
				m := readMsg(t, e.fromGW)
				switch {
				case strings.HasPrefix(want, "code:"):
					if got := errCode(m); want != "code:"+ftoa(got) {
						t.Fatalf("client got %v, want %s", m, want)
					}
				case strings.HasPrefix(want, "id:"):
					if _, ok := m["result"]; !ok || "id:"+ftoa(m["id"].(float64)) != want {
						t.Fatalf("client got %v, want result %s", m, want)
					}
				}
			}
		})
	}
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestStdioServerCrash(t *testing.T) {
	e := startRaw(t, 0)
	writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo"}}`)
	writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":"twelve","method":"ping"}`)
	readMsg(t, e.srvIn)
	readMsg(t, e.srvIn)
	e.srvOut.Close() // the server dies
	got := map[any]float64{}
	for range 2 {
		m := readMsg(t, e.fromGW)
		got[m["id"]] = errCode(m)
	}
	if got[11.0] != CodeUpstream || got["twelve"] != CodeUpstream {
		t.Fatalf("in-flight requests got %v, want CodeUpstream errors", got)
	}
	select {
	case err := <-e.runErr:
		if !errors.Is(err, ErrServerExited) {
			t.Fatalf("Run = %v, want ErrServerExited", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the server died")
	}
}

func TestStdioOverlongAnswers(t *testing.T) {
	e := startRaw(t, 1<<20)
	writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"big"}}`)
	readMsg(t, e.srvIn)
	writeLine(t, e.srvOut, `{"jsonrpc":"2.0","id":"big-1","result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 2<<20)+`"}]}}`)
	m := readMsg(t, e.fromGW)
	if m["id"] != "big-1" || errCode(m) != CodeUpstream {
		t.Fatalf("client got %v, want CodeUpstream for big-1", m)
	}
	// An over-long client request is answered with its own id.
	writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+strings.Repeat("y", 2<<20)+`"}}}`)
	m = readMsg(t, e.fromGW)
	if m["id"] != 17.0 || errCode(m) != CodeInvalidRequest {
		t.Fatalf("client got %v, want -32600 for 17", m)
	}
}

func TestStdioClientEOF(t *testing.T) {
	e := startRaw(t, 0)
	e.toGW.Close()
	select {
	case err := <-e.runErr:
		if err != nil {
			t.Fatalf("Run = %v, want nil at the client's EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return at the client's EOF")
	}
}
