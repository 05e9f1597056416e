package otelx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/otelx"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/storetest"
)

// Incoming trace context of the tests' requests.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// hookCalls records the traceparent of every webhook call.
type hookCalls struct {
	mu      sync.Mutex
	parents []string
	states  []string
}

func (h *hookCalls) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.parents...)
}

// stack is warden's server with otel: pointing at a test receiver and a
// webhook hook on every step.
type stack struct {
	url   string
	gd    *guardian.Guardian
	hooks *hookCalls
}

func newStack(t *testing.T, endpoint, protocol string) *stack {
	t.Helper()
	hc := &hookCalls{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc.mu.Lock()
		hc.parents = append(hc.parents, r.Header.Get("Traceparent"))
		hc.states = append(hc.states, r.Header.Get("Tracestate"))
		hc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(hook.Close)
	yaml := fmt.Sprintf(`otel: {endpoint: %q, protocol: %s, interval: 50ms}
policies: [testdata/policies.yaml]
hooks:
  - name: audit-hook
    events: ["steps/toolCallRequest"]
    webhook: {url: %q}
`, endpoint, protocol, hook.URL)
	cfg, err := config.Parse("testdata/w.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policies = []string{"testdata/policies.yaml"}
	store := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{Config: cfg, Store: store, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gd.Close(context.Background()) })
	if gd.OTel() == nil {
		t.Fatal("otel: configured and no exporter")
	}
	ah, err := acs.NewHandler(gd, acs.Options{Sessions: store})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Routes: []server.Route{aos.Route(aos.NewHandler(gd, aos.Options{})), acs.Route(ah)}, Store: store,
		Trace: gd.OTel().Middleware}))
	t.Cleanup(srv.Close)
	return &stack{url: srv.URL, gd: gd, hooks: hc}
}

func (s *stack) post(t *testing.T, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", traceparent)
	req.Header.Set("Tracestate", "vendor=abc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return out
}

func (s *stack) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.gd.OTel().Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func acsMsg(method, session string, payload map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": uuid.NewString(), "method": method, "params": map[string]any{
		"acs_version": "0.1.0", "request_id": uuid.NewString(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"metadata": map[string]any{"agent_id": "agent-7", "session_id": session}, "payload": payload}}
	b, _ := json.Marshal(m)
	return string(b)
}

func find(spans []span, name string) []span {
	var out []span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func children(spans []span, parent string) []span {
	var out []span
	for _, s := range spans {
		if s.ParentID == parent {
			out = append(out, s)
		}
	}
	return out
}

// TestSpansOfDecisions sends real decisions through POST /aos and POST
// /acs with a caller's traceparent and checks what an OTLP receiver gets,
// over http/protobuf and grpc.
func TestSpansOfDecisions(t *testing.T) {
	for _, proto := range []string{otelx.ProtocolHTTP, otelx.ProtocolGRPC} {
		t.Run(proto, func(t *testing.T) {
			var rc *receiver
			var endpoint string
			if proto == otelx.ProtocolHTTP {
				rc, endpoint = httpReceiver(t)
			} else {
				rc, endpoint = grpcReceiver(t)
			}
			s := newStack(t, endpoint, proto)

			// AOS: an allowed tool call.
			ans := s.post(t, "/aos", `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e1","toolId":"ls","inputs":[]},"context":{"session":{"id":"s1"}}}}`)
			if ans["result"] == nil {
				t.Fatalf("/aos: %v", ans)
			}
			s.flush(t)
			spans := rc.wait(t, 3)
			srvSpans := find(spans, "POST /aos")
			if len(srvSpans) != 1 {
				t.Fatalf("server spans: %+v", spans)
			}
			sv := srvSpans[0]
			if sv.TraceID != callerTrace || sv.ParentID != callerSpan {
				t.Errorf("server span %s/%s, want a child of the caller's %s/%s", sv.TraceID, sv.ParentID, callerTrace, callerSpan)
			}
			steps := children(spans, sv.SpanID)
			if len(steps) != 1 || steps[0].Name != "gen_ai.tool.call" {
				t.Fatalf("decision span under the server span: %+v", steps)
			}
			st := steps[0]
			for k, want := range map[string]any{"gen_ai.tool.name": "ls", "acs.capability": "unknown", "acs.session.id": "s1",
				"warden.surface": "aos", "warden.event": "steps/toolCallRequest", "warden.decision": "allow"} {
				if st.Attrs[k] != want {
					t.Errorf("step span %s = %v, want %v (%v)", k, st.Attrs[k], want, st.Attrs)
				}
			}
			if st.Attrs["warden.record_id"] == "" || st.Attrs["warden.record_id"] == nil {
				t.Errorf("no warden.record_id: %v", st.Attrs)
			}
			d, ok := st.Events["acs.decision"]
			if !ok || d["acs.decision"] != "allow" || d["acs.evaluator"] != "deterministic" {
				t.Errorf("acs.decision event: %v", st.Events)
			}
			guards := children(spans, st.SpanID)
			names := map[string]bool{}
			for _, g := range guards {
				names[g.Name] = true
				if g.TraceID != callerTrace || g.Start.Before(st.Start) || g.End.After(st.End) {
					t.Errorf("guardian span %s outside its step: %+v / %+v", g.Name, g, st)
				}
			}
			if !names["warden.guardian audit-hook"] || len(guards) < 2 {
				t.Errorf("guardian spans %v, want the policy engine's and audit-hook's", names)
			}
			// The webhook the decision called carries the same trace, its
			// parent the request's span.
			hp := s.hooks.get()
			if len(hp) != 1 || !strings.HasPrefix(hp[0], "00-"+callerTrace+"-"+sv.SpanID+"-") {
				t.Errorf("webhook traceparent %v, want trace %s parent %s", hp, callerTrace, sv.SpanID)
			}
			s.hooks.mu.Lock()
			states := append([]string(nil), s.hooks.states...)
			s.hooks.mu.Unlock()
			if len(states) != 1 || states[0] != "vendor=abc" {
				t.Errorf("webhook tracestate %q, want the caller's vendor=abc", states)
			}

			// ACS: a handshake, then a denied tool call with provenance.
			sid := uuid.NewString()
			hello := s.post(t, "/acs", acsMsg("handshake/hello", sid, map[string]any{
				"acs_versions_supported": []any{"0.1.0"}, "methods_implemented": []any{"steps/toolCallRequest"},
				"transports_supported": []any{"http"}, "provenance_producer": "deterministic"}))
			if hello["result"] == nil {
				t.Fatalf("handshake: %v", hello)
			}
			ans = s.post(t, "/acs", acsMsg("steps/toolCallRequest", sid, map[string]any{
				"tool": map[string]any{"name": "rm", "provider": "shell"}, "capability": "filesystem.delete",
				"arguments": map[string]any{"path": map[string]any{"value": "/tmp/x",
					"provenance": map[string]any{"provenance_id": "p1", "origin": "user_input", "source_id": "user-9"}}}}))
			if r, _ := ans["result"].(map[string]any); r == nil || r["decision"] != "deny" {
				t.Fatalf("/acs: %v", ans)
			}
			s.flush(t)
			spans = rc.wait(t, 8)
			acsSrv := find(spans, "POST /acs")
			if len(acsSrv) != 2 {
				t.Fatalf("POST /acs spans: %d", len(acsSrv))
			}
			var deny *span
			for _, sp := range find(spans, "gen_ai.tool.call") {
				if sp.Attrs["warden.surface"] == "acs" {
					deny = &sp
				}
			}
			if deny == nil {
				t.Fatalf("no ACS decision span: %+v", spans)
			}
			if deny.TraceID != callerTrace || (deny.ParentID != acsSrv[0].SpanID && deny.ParentID != acsSrv[1].SpanID) {
				t.Errorf("ACS decision span %s parent %s, want under a POST /acs span", deny.TraceID, deny.ParentID)
			}
			for k, want := range map[string]any{"gen_ai.tool.name": "rm", "acs.capability": "filesystem.delete",
				"acs.tool.provider": "shell", "acs.session.id": sid, "acs.agent.id": "agent-7", "warden.decision": "deny"} {
				if deny.Attrs[k] != want {
					t.Errorf("ACS span %s = %v, want %v", k, deny.Attrs[k], want)
				}
			}
			if o := fmt.Sprint(deny.Attrs["acs.provenance.origin"]); o != "[user_input]" {
				t.Errorf("acs.provenance.origin = %s", o)
			}
			if o := fmt.Sprint(deny.Attrs["acs.provenance.source_id"]); o != "[user-9]" {
				t.Errorf("acs.provenance.source_id = %s", o)
			}
			dd := deny.Events["acs.decision"]
			if dd["acs.decision"] != "deny" || dd["acs.reasoning"] != "rm is not allowed" || dd["acs.evaluator"] != "deterministic" ||
				dd["acs.policy_id"] != "otel-test-deny-rm" {
				t.Errorf("ACS acs.decision event: %v", dd)
			}
		})
	}
}

// TestNoTraceparent: a request without one starts a trace of its own, and
// the webhook still gets that trace's context.
func TestNoTraceparent(t *testing.T) {
	rc, endpoint := httpReceiver(t)
	s := newStack(t, endpoint, otelx.ProtocolHTTP)
	resp, err := http.Post(s.url+"/aos", "application/json", bytes.NewReader([]byte(
		`{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e1","toolId":"ls","inputs":[]},"context":{}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.flush(t)
	spans := rc.wait(t, 3)
	sv := find(spans, "POST /aos")
	if len(sv) != 1 || sv[0].ParentID != "" {
		t.Fatalf("want a root server span: %+v", sv)
	}
	hp := s.hooks.get()
	if len(hp) != 1 || !strings.HasPrefix(hp[0], "00-"+sv[0].TraceID+"-"+sv[0].SpanID+"-01") {
		t.Errorf("webhook traceparent %v, want trace %s", hp, sv[0].TraceID)
	}
}
