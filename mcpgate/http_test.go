package mcpgate

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

// upstreamLog records what reached the upstream server.
type upstreamLog struct {
	mu       sync.Mutex
	methods  []string
	apiKeys  []string
	sessions []string
}

func (l *upstreamLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.methods = append(l.methods, r.Method)
		l.apiKeys = append(l.apiKeys, r.Header.Get("X-Api-Key"))
		l.sessions = append(l.sessions, r.Header.Get("Mcp-Session-Id"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *upstreamLog) snapshot() (methods, keys, sessions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.methods...), append([]string(nil), l.apiKeys...), append([]string(nil), l.sessions...)
}

type httpEnv struct {
	cs    *mcp.ClientSession
	seen  *mcpserver.Seen
	store *memStore
	log   *upstreamLog
	url   string // the gateway's /mcp/test
}

func startHTTP(t *testing.T, protocol string, jsonResponses bool, copts *mcp.ClientOptions, roots ...*mcp.Root) *httpEnv {
	t.Helper()
	srv, seen := mcpserver.New()
	e := &httpEnv{seen: seen, log: &upstreamLog{}}
	up := httptest.NewServer(e.log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponses})))
	t.Cleanup(up.Close)
	var dec *pipeline.Pipeline
	dec, e.store = testDecider(t)
	gw := NewHTTP(dec, map[string]warden.Upstream{"test": {Name: "test", URL: up.URL, Headers: map[string]string{"X-Api-Key": "sekret"}}},
		HTTPOptions{Timeout: 5 * time.Second, Logf: t.Logf})
	front := httptest.NewServer(gw)
	t.Cleanup(front.Close)
	e.url = front.URL + "/mcp/test"
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, copts)
	client.AddRoots(roots...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	e.cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cs.Close() })
	return e
}

func TestHTTPScenarios(t *testing.T) {
	for _, pv := range protocols {
		for _, jsonResp := range []bool{false, true} {
			name := "protocol=" + pv + "/sse"
			if jsonResp {
				name = "protocol=" + pv + "/json"
			}
			t.Run(name, func(t *testing.T) { httpScenarios(t, pv, jsonResp) })
		}
	}
}

func httpScenarios(t *testing.T, pv string, jsonResp bool) {
	var progress atomic.Int32
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "model says hi"}, Model: "m", Role: "assistant"}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	}
	e := startHTTP(t, pv, jsonResp, opts, &mcp.Root{URI: "file:///work/project"})
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
		name    string
		tool    string
		args    map[string]any
		want    string
		isErr   bool
		reached int
		sseOnly bool // server requests during a call need a stream (and not 2026-07-28)
	}{
		{"allowed call", "echo", map[string]any{"text": "hello"}, "echo: hello", false, 1, false},
		{"denied call", "wire_money", nil, "denied by warden: wire transfers need approval", true, 0, false},
		{"hidden tool call", "secret_tool", nil, "secret_tool is not available", true, 0, false},
		{"redacted result", "contact", nil, "reach alice at [REDACTED:email]", false, 1, false},
		{"large result (3 MiB)", "big", map[string]any{"n": 3 << 20}, "xxxxxxxx", false, 1, false},
		{"server-initiated sampling", "sample", map[string]any{"text": "hello model"}, "sampled: model says hi", false, 1, true},
		{"denied sampling request", "sample", map[string]any{"text": "forbidden topic"}, "denied by warden: sampling request refused", false, 2, true},
		{"server-initiated roots", "roots", nil, "roots: file:///work/project", false, 1, true},
	}
	for _, c := range calls {
		if c.sseOnly && (pv == "" || jsonResp) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if c.isErr {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
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
	if !jsonResp {
		t.Run("progress notifications pass", func(t *testing.T) { checkProgress(t, ctx, e.cs, map[string]any{"ms": 1}, &progress) })
	}
	t.Run("sealed session id and configured headers", func(t *testing.T) {
		csid := e.cs.ID() // the client's: sealed by the gateway
		if csid == "" && pv != "" {
			t.Fatal("no session id through the gateway")
		}
		_, keys, sessions := e.log.snapshot()
		for i, k := range keys {
			if k != "sekret" {
				t.Fatalf("upstream request %d without the configured header", i)
			}
		}
		sid := "" // the upstream's own id, which the trace records
		if csid != "" {
			sid = sessions[len(sessions)-1]
			if sid == "" || sid == csid || strings.Contains(csid, sid) {
				t.Fatalf("upstream saw session %q; the client holds %q: want the upstream's own id, never the sealed one", sid, csid)
			}
		}
		recs := e.store.Records()
		var withSession int
		for _, r := range recs {
			if r.Surface != warden.SurfaceMCP || r.Event != EventName {
				t.Fatalf("record %+v", r)
			}
			if sid != "" && r.SessionID == sid {
				withSession++
			}
		}
		if sid != "" && withSession < len(recs)/2 {
			t.Fatalf("%d of %d records carry the session id", withSession, len(recs))
		}
	})
	t.Run("DELETE ends the session", func(t *testing.T) {
		sid := e.cs.ID()
		if sid == "" {
			t.Skip("stateless protocol: no session to end")
		}
		if err := e.cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			methods, _, _ := e.log.snapshot()
			for _, m := range methods {
				if m == http.MethodDelete {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the upstream never saw the DELETE")
	})
}

// rawPost posts body to the gateway and returns the status and body.
func rawPost(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHTTPUpstreamFailures(t *testing.T) {
	// A listener that accepts and never answers: the slow upstream.
	slow, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	go func() {
		for {
			c, err := slow.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	// A closed port: the upstream that is down.
	down, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + down.Addr().String() + "/mcp"
	down.Close()
	// An upstream answering garbage, and one answering 500.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("<html>oops</html>"))
	}))
	defer garbage.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer failing.Close()
	// An SSE upstream that sends one poisoned event, then one fine event.
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"POISONED\"}}\n\n")
		_, _ = io.WriteString(w, "id: e2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n")
		_, _ = io.WriteString(w, "data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"POISONED\"}]}}\n\n")
	}))
	defer sse.Close()

	dec, _ := testDecider(t)
	gw := NewHTTP(dec, map[string]warden.Upstream{
		"slow":    {URL: "http://" + slow.Addr().String() + "/mcp"},
		"down":    {URL: downURL},
		"garbage": {URL: garbage.URL},
		"failing": {URL: failing.URL},
		"sse":     {URL: sse.URL},
	}, HTTPOptions{Timeout: 300 * time.Millisecond, Logf: t.Logf})
	front := httptest.NewServer(gw)
	defer front.Close()

	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`
	cases := []struct {
		name, server, body string
		wantStatus         int
		want               []string
		maxTime            time.Duration
	}{
		{"upstream down", "down", call, 200, []string{`"code":-31901`, `"id":7`, "unreachable", `"data":{"name":"UPSTREAM_UNAVAILABLE","upstream":"down"}`}, 2 * time.Second},
		{"upstream slow", "slow", call, 200, []string{`"code":-31901`, `"id":7`, "did not answer within 300ms"}, 2 * time.Second},
		{"upstream garbage", "garbage", call, 200, []string{`"code":-31901`, "not JSON-RPC"}, 2 * time.Second},
		{"upstream 500", "failing", call, 200, []string{`"code":-31901`, "HTTP 500"}, 2 * time.Second},
		{"denied call never leaves", "down", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wire_money"}}`, 200,
			[]string{`"code":-31900`, "denied by warden: wire transfers need approval", `"name":"DENIED_BY_WARDEN"`,
				`"reason":"wire transfers need approval"`, `"recordId":"`, `"policyId":"deny-wire-money"`}, 2 * time.Second},
		{"batch: denied answered, rest forwarded", "down",
			`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wire_money"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, 200,
			[]string{`"id":1`, `"code":-31900`, `"id":2`, `"code":-31901`}, 2 * time.Second},
		{"malformed body", "down", `{"jsonrpc":`, 400, []string{`"code":-32700`, `"id":null`}, time.Second},
		{"body over the limit", "down", `{"x":"` + strings.Repeat("a", DefaultMaxMessage) + `"}`, 413, []string{`"code":-32600`}, 2 * time.Second},
		{"unknown server", "nope", call, 404, []string{`"code":-31901`, "nope"}, time.Second},
		{"SSE events inspected", "sse", call, 200,
			[]string{"id: e2", `"code":-31900`, "poisoned answer", `"recordId":"`}, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			status, body := rawPost(t, front.URL+"/mcp/"+c.server, c.body, nil)
			if el := time.Since(start); el > c.maxTime {
				t.Fatalf("answer took %s, want under %s", el, c.maxTime)
			}
			if status != c.wantStatus {
				t.Fatalf("status %d (%s), want %d", status, body, c.wantStatus)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Fatalf("body %.300q lacks %q", body, w)
				}
			}
			if c.server == "sse" && strings.Contains(body, "POISONED") { // a dropped event keeps only its id
				t.Fatalf("a poisoned event was relayed: %q", body)
			}
		})
	}
}

// TestHTTPHeadersNeverLogged checks that configured secrets do not reach the logs.
func TestHTTPHeadersNeverLogged(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	dec, _ := testDecider(t)
	gw := NewHTTP(dec, map[string]warden.Upstream{"down": {URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer TOPSECRET"}}},
		HTTPOptions{Timeout: 300 * time.Millisecond, Logf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			logs.WriteString(f)
			for _, x := range a {
				if s, ok := x.(string); ok {
					logs.WriteString(s)
				}
			}
		}})
	front := httptest.NewServer(gw)
	defer front.Close()
	_, body := rawPost(t, front.URL+"/mcp/down", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String()+body, "TOPSECRET") {
		t.Fatal("a configured header leaked into the logs or the answer")
	}
}
