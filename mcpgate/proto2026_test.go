package mcpgate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// MCP 2026-07-28 through /mcp/{server}: a go-sdk client pinned to
// 2026-07-28, the gateway, and a go-sdk 2026-07-28 upstream (stateless, as
// the go-sdk requires for that version), which checks Mcp-Method, Mcp-Name
// and Mcp-Param-* against every body (-32020 when they disagree).

var updateProto = flag.Bool("update-proto2026", false, "rewrite testdata/proto2026/*.golden")

const (
	v2026  = "2026-07-28"
	awsKey = "AKIAIOSFODNN7EXAMPLE"
)

// lookupSchema is a tool whose arguments become Mcp-Param-* headers: a
// string, a secret, an integer, a boolean and a nested string; query does
// not.
const lookupSchema = `{
  "type": "object",
  "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "key":    {"type": "string", "x-mcp-header": "Key"},
    "count":  {"type": "integer", "x-mcp-header": "Count"},
    "flag":   {"type": "boolean", "x-mcp-header": "Flag"},
    "where":  {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
    "query":  {"type": "string"}
  }
}`

// capture records every request that reached the upstream.
type capture struct {
	mu   sync.Mutex
	reqs []captured
}

type captured struct {
	method string
	header http.Header
	body   []byte
}

func (c *capture) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		c.mu.Lock()
		c.reqs = append(c.reqs, captured{method: r.Method, header: r.Header.Clone(), body: b})
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (c *capture) all() []captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]captured(nil), c.reqs...)
}

// byMethod returns the captured POSTs whose body has JSON-RPC method m.
func (c *capture) byMethod(m string) []captured {
	var out []captured
	for _, r := range c.all() {
		var msg struct{ Method string }
		if json.Unmarshal(r.body, &msg) == nil && msg.Method == m {
			out = append(out, r)
		}
	}
	return out
}

// server2026 is the upstream: lookup (echoes the arguments it got), slow
// (progress notifications), wire_money, a prompt and a resource.
func server2026(t *testing.T) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream2026", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", Description: "looks things up", InputSchema: json.RawMessage(lookupSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got " + string(req.Params.Arguments)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "wire_money", InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","x-mcp-header":"To"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
		})
	// The go-sdk reads no x-mcp-header from this schema (a "type" that is
	// not a string): its client sends no Mcp-Param-Region.
	s.AddTool(&mcp.Tool{Name: "nullable", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"note":{"type":["string","null"]}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "notes"}}}, nil
		})
	return s
}

type env2026 struct {
	cap   *capture
	store *memStore
	gw    *HTTP
	url   string // the gateway's /mcp/test
}

// start2026 runs the upstream (stateless; JSON or SSE answers) and a
// gateway in front of it with the policies of testdata/proto2026.
func start2026(t *testing.T, jsonResp bool, pins *Pins) *env2026 {
	t.Helper()
	srv := server2026(t)
	e := &env2026{cap: &capture{}}
	up := httptest.NewServer(e.cap.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResp})))
	t.Cleanup(up.Close)
	e.gw, e.store = gateway2026(t, up.URL, pins)
	front := httptest.NewServer(e.gw)
	t.Cleanup(front.Close)
	e.url = front.URL + "/mcp/test"
	return e
}

func gateway2026(t *testing.T, upURL string, pins *Pins) (*HTTP, *memStore) {
	t.Helper()
	set, err := policy.Load("testdata/proto2026")
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views, Store: st})
	return NewHTTP(dec, map[string]warden.Upstream{"test": {Name: "test", URL: upURL}},
		HTTPOptions{Timeout: 5 * time.Second, Logf: t.Logf, Pins: pins}), st
}

// connect2026 connects a go-sdk client asking for version pv through the
// gateway (HTTP client hc; nil: the default).
func connect2026(t *testing.T, url, pv string, hc *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// decodedValues returns every value of h, and the decoded form of those in
// the =?base64?...?= encoding.
func decodedValues(h http.Header) []string {
	var out []string
	for _, vs := range h {
		for _, v := range vs {
			out = append(out, v)
			if d, ok := decodeValue(v); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

var lookupArgs = map[string]any{"region": "us-west1", "key": awsKey, "count": 42, "flag": true,
	"where": map[string]any{"zone": "Zürich"}, "query": "SELECT 1"}

func TestMCP2026Session(t *testing.T) {
	for _, jsonResp := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResp), func(t *testing.T) { session2026(t, jsonResp) })
	}
}

func session2026(t *testing.T, jsonResp bool) {
	e := start2026(t, jsonResp, nil)
	var progress atomic.Int32
	cs := connect2026(t, e.url, v2026, nil, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A client in auto mode falls back to 2025-11-25 on any error of
	// server/discover: the version proves the headers went through.
	if got := cs.InitializeResult().ProtocolVersion; got != v2026 {
		t.Fatalf("negotiated %q, want %s (the client fell back)", got, v2026)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := strings.Join(toolNames(lt), ","); !strings.Contains(names, "lookup") {
		t.Fatalf("tools = %s", names)
	}

	t.Run("tools/call with Mcp-Param headers, secret redacted", func(t *testing.T) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: lookupArgs})
		if err != nil {
			t.Fatal(err)
		}
		if r.IsError {
			t.Fatalf("tool error: %s", textOf(t, r))
		}
		got := textOf(t, r)
		if strings.Contains(got, awsKey) || !strings.Contains(got, "[REDACTED") || !strings.Contains(got, "us-west1") {
			t.Fatalf("the upstream got %s", got)
		}
		calls := e.cap.byMethod("tools/call")
		if len(calls) != 1 {
			t.Fatalf("upstream saw %d tools/call", len(calls))
		}
		h := calls[0].header
		want := map[string]string{
			"Mcp-Method": "tools/call", "Mcp-Name": "lookup", "Mcp-Param-Region": "us-west1",
			"Mcp-Param-Count": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Zone": encodeValue("Zürich"),
		}
		for k, v := range want {
			if h.Get(k) != v {
				t.Errorf("upstream header %s = %q, want %q", k, h.Get(k), v)
			}
		}
		if k := h.Get("Mcp-Param-Key"); !strings.HasPrefix(k, "[REDACTED") {
			t.Errorf("Mcp-Param-Key = %q, want the redacted value the body carries", k)
		}
		if h.Get("Mcp-Param-Query") != "" {
			t.Error("an argument without x-mcp-header became a header")
		}
		goldenWire(t, calls[0], jsonResp)
	})

	// The go-sdk upstream checks each header against the body: values the
	// spec encodes, edge integers, false, and a null argument (no header).
	t.Run("tools/call with values that need encoding", func(t *testing.T) {
		args := map[string]any{"region": " padded ", "key": nil, "count": -9007199254740991, "flag": false,
			"where": map[string]any{"zone": "=?base64?literal?="}, "query": "line1\nline2"}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("call: %v %v", r, err)
		}
		calls := e.cap.byMethod("tools/call")
		h := calls[len(calls)-1].header
		if h.Get("Mcp-Param-Region") != "=?base64?IHBhZGRlZCA=?=" || h.Get("Mcp-Param-Count") != "-9007199254740991" ||
			h.Get("Mcp-Param-Flag") != "false" || h.Get("Mcp-Param-Zone") != "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=" || len(h.Values("Mcp-Param-Key")) != 0 {
			t.Fatalf("upstream headers %v", h)
		}
	})

	t.Run("a schema the go-sdk reads no annotation from", func(t *testing.T) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nullable", Arguments: map[string]any{"region": "eu", "note": nil}})
		if err != nil || r.IsError {
			t.Fatalf("call: %v %v", r, err)
		}
		calls := e.cap.byMethod("tools/call")
		if h := calls[len(calls)-1].header; h.Get("Mcp-Param-Region") != "eu" {
			t.Fatalf("upstream headers %v", h)
		}
	})

	t.Run("prompts/get and resources/read carry Mcp-Name", func(t *testing.T) {
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err != nil {
			t.Fatal(err)
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///notes.txt"})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "notes" {
			t.Fatalf("read: %+v, %v", rr, err)
		}
		for m, name := range map[string]string{"prompts/get": "greet", "resources/read": "file:///notes.txt"} {
			got := e.cap.byMethod(m)
			if len(got) == 0 || got[0].header.Get("Mcp-Name") != name || got[0].header.Get("Mcp-Method") != m {
				t.Fatalf("%s reached the upstream with %v", m, got)
			}
		}
	})

	t.Run("denied call never reaches the upstream", func(t *testing.T) {
		before := len(e.cap.byMethod("tools/call"))
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wire_money", Arguments: map[string]any{"to": "mallory"}})
		if err == nil || !strings.Contains(err.Error(), "wire transfers need approval") {
			t.Fatalf("error %v", err)
		}
		if n := len(e.cap.byMethod("tools/call")); n != before {
			t.Fatalf("upstream saw %d more tools/call", n-before)
		}
	})

	if !jsonResp {
		t.Run("progress notifications pass", func(t *testing.T) { checkProgress(t, ctx, cs, map[string]any{}, &progress) })
	}

	t.Run("the secret left in no body and no header", func(t *testing.T) {
		for i, r := range e.cap.all() {
			if bytes.Contains(r.body, []byte(awsKey)) {
				t.Errorf("upstream request %d: body carries the secret: %s", i, r.body)
			}
			for _, v := range decodedValues(r.header) {
				if strings.Contains(v, awsKey) {
					t.Errorf("upstream request %d: a header carries the secret: %v", i, r.header)
				}
			}
			if v := r.header.Get("Mcp-Protocol-Version"); v != v2026 {
				t.Errorf("upstream request %d: Mcp-Protocol-Version %q", i, v)
			}
			if r.method == http.MethodPost && r.header.Get("Mcp-Method") == "" {
				t.Errorf("upstream request %d: no Mcp-Method", i)
			}
		}
		// The client's own request, as decided and recorded, had the secret.
		if len(findRecords(e.store, awsKey)) == 0 {
			t.Error("the trace has no record of the call with the secret")
		}
	})
}

// goldenWire compares the tools/call the upstream got — its standard
// headers and the arguments of its body — with testdata/proto2026.
func goldenWire(t *testing.T, c captured, jsonResp bool) {
	t.Helper()
	var b strings.Builder
	var keys []string
	for k := range c.header {
		if strings.HasPrefix(k, "Mcp-") && k != "Mcp-Session-Id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	b.WriteString("POST /mcp (as the upstream receives it)\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(c.header[k], ", "))
	}
	var body struct {
		Method string
		Params struct {
			Name      string
			Arguments json.RawMessage
		}
	}
	if err := json.Unmarshal(c.body, &body); err != nil {
		t.Fatal(err)
	}
	var args bytes.Buffer
	if err := json.Indent(&args, body.Params.Arguments, "", "  "); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nmethod: %s\nparams.name: %s\nparams.arguments: %s\n", body.Method, body.Params.Name, args.String())
	path := filepath.Join("testdata", "proto2026", "tools-call.golden")
	if *updateProto && !jsonResp {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./mcpgate -run TestMCP2026Session -update-proto2026 writes it)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("the upstream's tools/call:\n%s\nwant (%s):\n%s", b.String(), path, want)
	}
}

// TestMCP2026OlderClient: a 2025-11-25 client through the same gateway
// and upstream sends no standard header and gets none forwarded.
func TestMCP2026OlderClient(t *testing.T) {
	e := start2026(t, false, nil)
	cs := connect2026(t, e.url, "2025-11-25", nil, nil)
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: lookupArgs})
	if err != nil || strings.Contains(textOf(t, r), awsKey) {
		t.Fatalf("call: %v %v", r, err)
	}
	for i, c := range e.cap.all() {
		for k := range c.header {
			if k == "Mcp-Method" || k == "Mcp-Name" || isParamHeader(k) {
				t.Errorf("upstream request %d under 2025-11-25 carries %s", i, k)
			}
		}
	}
}

// post2026 POSTs body to url with the headers given (key, value pairs)
// and returns the status and the decoded answer.
func post2026(t *testing.T, url, body string, kv ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"jsonrpc"`) {
				_ = json.Unmarshal([]byte(d), &m)
			}
		}
	} else {
		_ = json.Unmarshal(b, &m)
	}
	return resp.StatusCode, m
}

func meta2026(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}` + extra
}

func callBody(args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"lookup","arguments":` + args + `,` + meta2026("") + `}}`
}

// TestMCP2026HeaderMismatch: a 2026-07-28 request whose headers disagree
// with its body is answered 400 / -32020 by the gateway, before it is
// decided or forwarded.
func TestMCP2026HeaderMismatch(t *testing.T) {
	e := start2026(t, true, nil)
	// The gateway learns lookup's x-mcp-header bindings from a tools/list.
	if code, m := post2026(t, e.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta2026("")+`}}`,
		"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/list"); code != 200 || m["result"] == nil {
		t.Fatalf("tools/list: %d %v", code, m)
	}
	good := []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}
	args := `{"region":"us-west1","query":"q"}`
	cases := []struct {
		name string
		body string
		kv   []string
	}{
		{"Mcp-Method differs", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/list", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}},
		{"Mcp-Method missing", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}},
		{"Mcp-Method twice", callBody(args), append(append([]string(nil), good...), "Mcp-Method", "tools/call")},
		{"Mcp-Name differs (routes to another tool)", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "echo", "Mcp-Param-Region", "us-west1"}},
		{"Mcp-Name missing", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Param-Region", "us-west1"}},
		{"Mcp-Param differs", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "eu-west1"}},
		{"Mcp-Param missing", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup"}},
		{"Mcp-Param for an absent argument", callBody(`{"query":"q"}`), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}},
		{"Mcp-Param bad base64", callBody(args), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "=?base64?***?="}},
		{"Mcp-Param integer differs", callBody(`{"count":42}`), []string{"Mcp-Protocol-Version", v2026, "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Count", "43"}},
		{"Mcp-Protocol-Version differs from _meta", callBody(args), []string{"Mcp-Protocol-Version", "2026-08-01", "Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}},
		{"_meta version without the header", callBody(args), []string{"Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.cap.all())
			records := len(e.store.Records())
			code, m := post2026(t, e.url, c.body, c.kv...)
			errObj, _ := m["error"].(map[string]any)
			if code != http.StatusBadRequest || errObj == nil || errObj["code"] != float64(CodeHeaderMismatch) || m["id"] != float64(7) {
				t.Fatalf("answer %d %v, want 400 with error %d for id 7", code, m, CodeHeaderMismatch)
			}
			if n := len(e.cap.all()); n != before {
				t.Fatalf("the upstream got %d request(s)", n-before)
			}
			if n := len(e.store.Records()); n != records {
				t.Fatalf("%d message(s) decided", n-records)
			}
		})
	}
	t.Run("agreeing headers pass (integer as 42.0, encoded name)", func(t *testing.T) {
		code, m := post2026(t, e.url, callBody(`{"region":"us-west1","count":42}`), "Mcp-Protocol-Version", v2026,
			"Mcp-Method", "tools/call", "Mcp-Name", encodeValueForced("lookup"), "Mcp-Param-Region", "us-west1", "Mcp-Param-Count", "42.0")
		if code != 200 || m["result"] == nil {
			t.Fatalf("answer %d %v", code, m)
		}
		last := e.cap.all()[len(e.cap.all())-1]
		if last.header.Get("Mcp-Param-Count") != "42" || last.header.Get("Mcp-Name") != "lookup" {
			t.Fatalf("forwarded %v", last.header)
		}
	})
	t.Run("headers of the client are not forwarded", func(t *testing.T) {
		code, m := post2026(t, e.url, callBody(`{"region":"us-west1"}`), "Mcp-Protocol-Version", v2026,
			"Mcp-Method", "tools/call", "Mcp-Name", "lookup", "Mcp-Param-Region", "us-west1", "Mcp-Param-Stowaway", awsKey)
		if code != 200 || m["result"] == nil {
			t.Fatalf("answer %d %v", code, m)
		}
		last := e.cap.all()[len(e.cap.all())-1]
		for _, v := range decodedValues(last.header) {
			if strings.Contains(v, awsKey) {
				t.Fatalf("forwarded %v", last.header)
			}
		}
	})
	t.Run("a 2025-11-25 request is not checked", func(t *testing.T) {
		before := len(e.cap.all())
		post2026(t, e.url, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, "Mcp-Protocol-Version", "2025-11-25", "Mcp-Method", "nonsense")
		all := e.cap.all()
		if len(all) != before+1 || all[len(all)-1].header.Get("Mcp-Method") != "" {
			t.Fatalf("the request did not reach the upstream as 2025-11-25 does")
		}
	})
}

// encodeValueForced is s in the =?base64?...?= form even when it need not be.
func encodeValueForced(s string) string {
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
}

// TestMCP2026ParamsFromPins: a replica that never saw the tools/list (the
// client listed through another one) rebuilds the Mcp-Param-* headers
// from the tool pins both share.
func TestMCP2026ParamsFromPins(t *testing.T) {
	st := storetest.NewMem()
	a := start2026(t, false, &Pins{Store: st, Logf: t.Logf})
	gwB, _ := gateway2026(t, a.gw.ups["test"].cfg.URL, &Pins{Store: st, Logf: t.Logf})
	b := httptest.NewServer(gwB)
	t.Cleanup(b.Close)
	// tools/call goes to B, everything else to A.
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			r = r.Clone(r.Context())
			r.URL.Host = strings.TrimPrefix(b.URL, "http://")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs := connect2026(t, a.url, v2026, hc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: lookupArgs})
	if err != nil || r.IsError {
		t.Fatalf("call through the other replica: %v %v", r, err)
	}
	calls := a.cap.byMethod("tools/call")
	if len(calls) != 1 || calls[0].header.Get("Mcp-Param-Region") != "us-west1" || strings.Contains(calls[0].header.Get("Mcp-Param-Key"), awsKey) {
		t.Fatalf("upstream got %v", calls)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
