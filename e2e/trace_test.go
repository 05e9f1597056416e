package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is an OTLP/HTTP receiver keeping each span's name, trace id
// and parent.
type otlpSink struct {
	mu    sync.Mutex
	spans []string // "name trace parent"
}

func (o *otlpSink) serve(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					o.spans = append(o.spans, fmt.Sprintf("%s %x %x", sp.GetName(), sp.GetTraceId(), sp.GetParentSpanId()))
				}
			}
		}
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func (o *otlpSink) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.spans...)
}

// headerCounter is an upstream that records each request's traceparent.
type headerCounter struct {
	mu      sync.Mutex
	parents []string
	body    string
}

func (h *headerCounter) serve(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.parents = append(h.parents, r.Header.Get("Traceparent"))
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, h.body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func (h *headerCounter) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.parents...)
}

// TestTraceThroughTheBinary: `warden serve` with otel: and
// trace.ocsf_file. A decision on /aos and a tool call through the MCP
// gateway and a message through the A2A proxy, each with a caller's
// traceparent, reach the OTLP receiver in the caller's trace; the MCP
// upstream and the A2A agent get a traceparent of that trace;
// /metrics has the drop counters; on SIGTERM the spans are flushed; the
// OCSF file holds the events `warden runs -o ocsf` prints.
func TestTraceThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	col := &otlpSink{}
	colURL := col.serve(t)
	up := &headerCounter{body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`}
	upURL := up.serve(t)
	agent := &headerCounter{body: `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","role":"agent","messageId":"r1","parts":[{"kind":"text","text":"ok"}]}}`}
	agentURL := agent.serve(t)
	ocsfFile := filepath.Join(dir, "ocsf.jsonl")
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("otel: {endpoint: %q, interval: 100ms}\ntrace: {ocsf_file: %q}\nmcp:\n  servers:\n    up: {url: %q}\na2a:\n  agents:\n    ag: {url: %q}\n",
		colURL, ocsfFile, upURL+"/mcp", agentURL+"/")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	srv := startServer(t, wardenBinary(t), "--config", cfg, "--data", data)

	const trace = "0af7651916cd43dd8448eb211c80319c"
	for i, c := range []struct{ path, body string }{
		{"/aos", `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e1","toolId":"ls","inputs":[]},"context":{"session":{"id":"trace-e2e"}}}}`},
		{"/mcp/up", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":"1"}}}`},
		{"/a2a/ag", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.url+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Traceparent", fmt.Sprintf("00-%s-%016x-01", trace, i+1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, b)
		}
	}
	for name, h := range map[string]*headerCounter{"MCP upstream": up, "A2A agent": agent} {
		if ps := h.get(); len(ps) != 1 || !strings.HasPrefix(ps[0], "00-"+trace+"-") {
			t.Errorf("%s traceparent %v, want one in trace %s", name, ps, trace)
		}
	}
	// The ACS ServerHello says where the decisions go (trace_emission).
	hello := fmt.Sprintf(`{"jsonrpc":"2.0","id":"h1","method":"handshake/hello","params":{"acs_version":"0.1.0","request_id":"00000000-0000-4000-8000-000000000001","timestamp":%q,"metadata":{"agent_id":"a","session_id":"trace-e2e-acs"},"payload":{"acs_versions_supported":["0.1.0"],"methods_implemented":["steps/toolCallRequest"],"transports_supported":["http"],"provenance_producer":"none","profiles_supported":["acs-core","acs-trace","acs-inspect","acs-crypto"]}}}`,
		time.Now().UTC().Format(time.RFC3339Nano))
	code, body := send(t, "POST", srv.url+"/acs", "application/json", "", "", hello)
	if code != http.StatusOK || !strings.Contains(body, `"trace_emission":{"ocsf_enabled":true,"otel_enabled":true}`) {
		t.Errorf("ServerHello: %d %s", code, body)
	}
	// It accepts ACS-Trace (exporters on) and ACS-Inspect (the SQLite
	// store keeps AgBOMs), not ACS-Crypto: no acs.signing_key.
	if !strings.Contains(body, `"profiles_accepted":["acs-core","acs-trace","acs-inspect"]`) {
		t.Errorf("ServerHello profiles_accepted: %s", body)
	}
	code, metrics := send(t, "GET", srv.url+"/metrics", "", "", "", "")
	for _, m := range []string{"warden_otel_decisions_dropped_total 0", "warden_otel_spans_dropped_total 0", "warden_ocsf_dropped_total 0"} {
		if code != http.StatusOK || !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %q", m)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.wait(t, 30*time.Second); err != nil {
		t.Fatalf("warden serve: %v\n%s", err, srv.out)
	}
	spans := col.all()
	want := map[string]string{
		"POST /aos":        fmt.Sprintf("%s %016x", trace, 1),
		"POST /mcp/":       fmt.Sprintf("%s %016x", trace, 2),
		"POST /a2a/":       fmt.Sprintf("%s %016x", trace, 3),
		"gen_ai.tool.call": trace, // the AOS step and the MCP tools/call
	}
	for name, prefix := range want {
		n := 0
		for _, s := range spans {
			if strings.HasPrefix(s, name+" "+prefix) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no span %q in %s: %v", name, prefix, spans)
		}
	}
	b, err := os.ReadFile(ocsfFile)
	if err != nil {
		t.Fatal(err)
	}
	sunk := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out, err := exec.Command(wardenBinary(t), "runs", "--data", data, "-o", "ocsf").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(sunk) || len(got) < 2 {
		t.Fatalf("runs -o ocsf gave %d lines, the sink wrote %d:\n%s\n%s", len(got), len(sunk), out, b)
	}
	for i := range got {
		if got[i] != sunk[len(sunk)-1-i] {
			t.Errorf("line %d differs:\n%s\n%s", i, got[i], sunk[len(sunk)-1-i])
		}
	}
}
