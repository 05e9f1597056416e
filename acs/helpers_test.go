package acs

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"

	"github.com/google/uuid"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// fixture is a Handler on a Guardian with acs/testdata/policies.yaml (no
// built-in pack) and an in-memory store.
type fixture struct {
	t     testing.TB
	h     *Handler
	store *storetest.Mem
	g     *guardian.Guardian
	now   time.Time
}

func newFixture(t testing.TB, mod func(*Options)) *fixture {
	t.Helper()
	store := storetest.NewMem()
	g, err := guardian.Open(guardian.Options{Policies: []string{"testdata/policies.yaml"}, NoBuiltin: true, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	f := &fixture{t: t, store: store, g: g, now: time.Now()}
	o := Options{Sessions: store, Keys: map[string][]byte{"k1": testKey}, RequireSignatures: true,
		Approvals: g.Approvals() != nil, ApprovalsURL: "http://warden.test", ApprovalWait: time.Minute,
		Now: func() time.Time { return f.now }}
	if mod != nil {
		mod(&o)
	}
	if f.h, err = NewHandler(g, o); err != nil {
		t.Fatal(err)
	}
	return f
}

// session is one ACS session of a fixture's test client.
type session struct {
	f     *fixture
	id    string
	agent string
	keyID string
}

func (f *fixture) session() *session {
	return &session{f: f, id: uuid.NewString(), agent: "agent-1", keyID: "k1"}
}

// msg builds a request; mod edits params before it is signed.
func (s *session) msg(method string, payload map[string]any, mod func(params map[string]any)) map[string]any {
	params := map[string]any{
		"acs_version": Version, "request_id": uuid.NewString(),
		"timestamp": s.f.now.UTC().Format(time.RFC3339Nano),
		"metadata":  map[string]any{"agent_id": s.agent, "session_id": s.id},
		"payload":   payload,
	}
	if mod != nil {
		mod(params)
	}
	m := map[string]any{"jsonrpc": "2.0", "id": uuid.NewString(), "method": method, "params": params}
	if s.keyID != "" {
		md, _ := params["metadata"].(map[string]any)
		sid, _ := md["session_id"].(string)
		v, err := NewSigner(map[string][]byte{s.keyID: testKey}).mac(s.keyID, sid, m)
		if err != nil {
			s.f.t.Fatal(err)
		}
		params["signature"] = map[string]any{"algorithm": AlgHMAC, "value": v, "key_id": s.keyID}
	}
	return m
}

// send answers m and decodes the answer.
func (s *session) send(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		s.f.t.Fatal(err)
	}
	return s.f.raw(b)
}

func (f *fixture) raw(b []byte) map[string]any {
	var out map[string]any
	if err := json.Unmarshal(f.h.Handle(context.Background(), b, "http"), &out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (s *session) call(method string, payload map[string]any) map[string]any {
	return s.send(s.msg(method, payload, nil))
}

func helloPayload(methods ...string) map[string]any {
	ms := make([]any, len(methods))
	for i, m := range methods {
		ms[i] = m
	}
	return map[string]any{"acs_versions_supported": []any{"0.1.0"}, "methods_implemented": ms,
		"transports_supported": []any{"http", "stdio"}, "provenance_producer": "none",
		"profiles_supported": []any{"acs-core", "acs-audit"},
		"wrapped_protocols":  []any{map[string]any{"protocol": "MCP", "version": "2025-06-18"}}}
}

var allHooks = append(append([]string{}, hooksList()...), "system/ping", "protocols/MCP/tools/call", "agbom/snapshot", "agbom/changed")

func hooksList() []string {
	var out []string
	for m := range payloadRules {
		if m != MethodHello && m != MethodPing {
			out = append(out, m)
		}
	}
	return append(out, "steps/sessionStart", "steps/agentTrigger", "steps/turnStart", "steps/sessionEnd")
}

// hello negotiates every method warden evaluates.
func (s *session) hello() map[string]any {
	s.f.t.Helper()
	r := s.call(MethodHello, helloPayload(allHooks...))
	if r["error"] != nil {
		s.f.t.Fatalf("handshake: %v", r["error"])
	}
	return r
}

func result(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", r)
	}
	return res
}

func errCode(r map[string]any) int {
	e, _ := r["error"].(map[string]any)
	if e == nil {
		return 0
	}
	n, _ := e["code"].(float64)
	return int(n)
}

func toolCall(name string, args map[string]any) map[string]any {
	wrapped := map[string]any{}
	for k, v := range args {
		wrapped[k] = map[string]any{"value": v}
	}
	return map[string]any{"tool": map[string]any{"name": name}, "arguments": wrapped}
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "value": s}}}
}

var _ acsstate.Store = (*storetest.Mem)(nil)

type time_ = time.Time

func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
