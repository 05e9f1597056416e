package acsschema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/acsclient"
	"github.com/wardenhq/warden/internal/acsschema"
)

const (
	rid  = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
)

func signature() map[string]any {
	return map[string]any{"algorithm": "HMAC-SHA256", "value": "c2ln", "key_id": "k1"}
}

// answer is a result response with fields merged into a valid allow.
func answer(fields map[string]any, drop ...string) []byte {
	result := map[string]any{"type": "final", "acs_version": "0.1.0", "request_id": rid, "decision": "allow",
		"chain_hash": hash, "signature": signature()}
	for k, v := range fields {
		result[k] = v
	}
	for _, k := range drop {
		delete(result, k)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "1", "result": result})
	return b
}

func TestResponse(t *testing.T) {
	s := acsschema.Load(t)
	tests := []struct {
		name  string
		b     []byte
		valid bool
	}{
		{"allow", answer(nil), true},
		{"hand-written deny", []byte(`{"jsonrpc":"2.0","id":7,"result":{"type":"final","acs_version":"0.1.0",
			"request_id":"` + rid + `","decision":"deny","reasoning":"shell is off","reason_codes":["no-shell"],
			"policy_references":[{"policy_id":"no-shell","policy_version":"3","rule_id":"r1"}],
			"metadata":{"evaluator":"deterministic","evaluation_duration_ms":2},
			"chain_hash":"` + hash + `","signature":{"algorithm":"HMAC-SHA256","value":"c2ln","key_id":"k1"}}}`), true},
		{"modify", answer(map[string]any{"decision": "modify", "reasoning": "redacted",
			"modifications": map[string]any{"redactions": []any{map[string]any{"path": "/arguments/to/value", "replacement": "[REDACTED]"}}}}), true},
		{"ask (stand-in ask-details)", answer(map[string]any{"decision": "ask", "reasoning": "r",
			"ask_details": map[string]any{"approver": map[string]any{"type": "human", "id": "ops"}}}), true},
		{"defer (stand-in defer-details)", answer(map[string]any{"decision": "defer", "reasoning": "r",
			"defer_details": map[string]any{"resolution_method": "out_of_band", "resolution_timeout_ms": 1000, "timeout_decision": "deny"}}), true},
		{"ping", answer(map[string]any{"payload": map[string]any{"status": "ok", "echo": "x", "server_timestamp": "2026-01-01T00:00:00Z"}}, "chain_hash", "signature"), true},
		{"error", []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`), true},
		{"error with data and signature", []byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32006,"message":"stale",
			"data":{"reason":"timestamp_out_of_window","skew_window_ms":300000},"signature":{"algorithm":"HMAC-SHA256","value":"c2ln","key_id":"k1"}}}`), true},

		{"decision maybe", answer(map[string]any{"decision": "maybe"}), false},
		{"deny without reasoning", answer(map[string]any{"decision": "deny"}), false},
		{"modify without modifications", answer(map[string]any{"decision": "modify", "reasoning": "r"}), false},
		{"modify with empty modifications", answer(map[string]any{"decision": "modify", "reasoning": "r", "modifications": map[string]any{}}), false},
		{"ask without ask_details", answer(map[string]any{"decision": "ask", "reasoning": "r"}), false},
		{"defer without defer_details", answer(map[string]any{"decision": "defer", "reasoning": "r"}), false},
		{"chain_hash not hex", answer(map[string]any{"chain_hash": strings.Repeat("g", 64)}), false},
		{"chain_hash uppercase", answer(map[string]any{"chain_hash": strings.ToUpper(hash)}), false},
		{"request_id not a uuid", answer(map[string]any{"request_id": "req-1"}), false},
		{"type progress", answer(map[string]any{"type": "progress"}), false},
		{"no acs_version", answer(nil, "acs_version"), false},
		{"signature without key_id", answer(map[string]any{"signature": map[string]any{"algorithm": "HMAC-SHA256", "value": "x"}}), false},
		{"unknown algorithm", answer(map[string]any{"signature": map[string]any{"algorithm": "HMAC-MD5", "value": "x", "key_id": "k"}}), false},
		{"result and error", []byte(`{"jsonrpc":"2.0","id":"1","result":{"type":"final","acs_version":"0.1.0","request_id":"` + rid +
			`","decision":"allow"},"error":{"code":-32603,"message":"x"}}`), false},
		{"result with a null id", []byte(`{"jsonrpc":"2.0","id":null,"result":{"type":"final","acs_version":"0.1.0","request_id":"` + rid + `","decision":"allow"}}`), false},
		{"extra top-level member", []byte(`{"jsonrpc":"2.0","id":"1","extra":1,"error":{"code":-32603,"message":"x"}}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Response(tt.b)
			if tt.valid && err != nil {
				t.Errorf("valid answer refused: %v\n%s", err, tt.b)
			}
			if !tt.valid && err == nil {
				t.Errorf("invalid answer accepted:\n%s", tt.b)
			}
		})
	}
}

func TestHandshake(t *testing.T) {
	s := acsschema.Load(t)
	serverHello := map[string]any{
		"negotiated_version":             "0.1.0",
		"methods_evaluated":              []string{"steps/toolCallRequest", "system/ping"},
		"selected_transport":             "http",
		"signature_algorithms_supported": []string{"HMAC-SHA256"},
		"timeout_config":                 map[string]any{"default_ms": 5000, "per_method_ms": map[string]any{"steps/toolCallRequest": 2000}},
		"on_decision_failure":            "proceed",
		"skew_window_ms":                 300000,
		"approver_types_supported":       []string{"human"},
		"policy_requires_provenance":     false,
		"trace_emission":                 map[string]any{"otel_enabled": true, "otel_collector_endpoint": "http://127.0.0.1:4318"},
		"profiles_accepted":              []string{"acs-core", "acs-audit"},
		"signature":                      signature(),
	}
	if err := s.ServerHello(serverHello); err != nil {
		t.Errorf("valid ServerHello refused: %v", err)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "abc", "result": serverHello})
	if err := s.HelloResponse(b); err != nil {
		t.Errorf("valid handshake answer refused: %v", err)
	}
	if err := s.Response(b); err == nil {
		t.Error("response-envelope.json accepted a ServerHello (it has no ServerHello alternative in this copy)")
	}
	bad := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"no timeout_config", func(m map[string]any) { delete(m, "timeout_config") }},
		{"default_ms 0", func(m map[string]any) { m["timeout_config"] = map[string]any{"default_ms": 0} }},
		{"transport carrier-pigeon", func(m map[string]any) { m["selected_transport"] = "carrier-pigeon" }},
		{"version 0.1", func(m map[string]any) { m["negotiated_version"] = "0.1" }},
		{"profile acs-gold", func(m map[string]any) { m["profiles_accepted"] = []string{"acs-gold"} }},
		{"signature without value", func(m map[string]any) { m["signature"] = map[string]any{"algorithm": "HMAC-SHA256", "key_id": "k"} }},
	}
	for _, tt := range bad {
		m := map[string]any{}
		for k, v := range serverHello {
			m[k] = v
		}
		tt.mutate(m)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "abc", "result": m})
		if err := s.HelloResponse(b); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
		if tt.name != "signature without value" {
			if err := s.ServerHello(m); err == nil {
				t.Errorf("%s: ServerHello accepted", tt.name)
			}
		}
	}
	refusal := []byte(`{"jsonrpc":"2.0","id":"abc","error":{"code":-32001,"message":"unsupported version","data":{"supported_versions":["0.1.0"]}}}`)
	if err := s.HelloResponse(refusal); err != nil {
		t.Errorf("refusal: %v", err)
	}

	c := acsclient.NewWithTransport(&acsclient.HTTPTransport{URL: "http://x"}, acsclient.Options{})
	hello := c.ClientHello([]string{"steps/toolCallRequest", "protocols/MCP/tools/call", "system/ping"})
	if err := s.ClientHello(hello); err != nil {
		t.Errorf("acsclient's ClientHello refused: %v", err)
	}
	if err := s.Payload("handshake/hello", hello); err != nil {
		t.Errorf("Payload(handshake/hello): %v", err)
	}
	delete(hello, "provenance_producer")
	if err := s.ClientHello(hello); err == nil {
		t.Error("ClientHello without provenance_producer accepted")
	}
	hello["provenance_producer"] = "none"
	hello["methods_implemented"] = []string{"toolCallRequest"}
	if err := s.ClientHello(hello); err == nil {
		t.Error("ClientHello with a method outside the namespaces accepted")
	}
}

// TestRequest validates requests built by acsclient, and tampered ones.
func TestRequest(t *testing.T) {
	s := acsschema.Load(t)
	c := acsclient.NewWithTransport(&acsclient.HTTPTransport{URL: "http://x"}, acsclient.Options{KeyID: "k1", Key: []byte("ikm")})
	payload := map[string]any{"tool": map[string]any{"name": "sh"}, "arguments": map[string]any{"cmd": map[string]any{"value": "ls"}}}
	tests := []struct {
		name  string
		mods  []func(*acsclient.Envelope)
		valid bool
	}{
		{"signed", nil, true},
		{"unsigned", []func(*acsclient.Envelope){acsclient.Unsigned}, true},
		{"with nonce, turn and chain hash", []func(*acsclient.Envelope){acsclient.WithNonce("0123456789abcdef0123"),
			acsclient.WithTurnID("t1"), acsclient.WithChainHash(hash)}, true},
		{"short nonce", []func(*acsclient.Envelope){acsclient.WithNonce("short")}, false},
		{"request_id not a uuid", []func(*acsclient.Envelope){acsclient.WithRequestID("r-1")}, false},
		{"timestamp not a date-time", []func(*acsclient.Envelope){acsclient.WithParam("timestamp", "yesterday")}, false},
		{"session_id not a uuid", []func(*acsclient.Envelope){acsclient.WithSession("s-1")}, false},
		{"no acs_version", []func(*acsclient.Envelope){acsclient.WithoutParam("acs_version")}, false},
		{"payload not an object", []func(*acsclient.Envelope){acsclient.WithParam("payload", []any{})}, false},
		{"method outside the namespaces", []func(*acsclient.Envelope){func(e *acsclient.Envelope) { e.Method = "tools/call" }}, false},
		{"no id", []func(*acsclient.Envelope){acsclient.WithID(nil)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := c.Request("steps/toolCallRequest", payload, tt.mods...)
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Request(b)
			if tt.valid && err != nil {
				t.Errorf("refused: %v\n%s", err, b)
			}
			if !tt.valid && err == nil {
				t.Errorf("accepted:\n%s", b)
			}
		})
	}
}

func TestPayload(t *testing.T) {
	s := acsschema.Load(t)
	noProv := map[string]any{"tool": map[string]any{"name": "sh"}, "arguments": map[string]any{"cmd": map[string]any{"value": "ls"}}}
	withProv := map[string]any{"tool": map[string]any{"name": "sh"}, "arguments": map[string]any{"cmd": map[string]any{"value": "ls",
		"provenance": map[string]any{"provenance_id": "p1", "origin": "user_input"}}}}
	if err := s.Payload("steps/toolCallRequest", withProv); err != nil {
		t.Errorf("toolCallRequest with provenance: %v", err)
	}
	if err := s.Payload("steps/toolCallRequest", noProv); err == nil {
		t.Error("the draft schema accepted an argument without provenance")
	}
	if err := s.PayloadCore("steps/toolCallRequest", noProv); err != nil {
		t.Errorf("PayloadCore refused an argument without provenance: %v", err)
	}
	if err := s.PayloadCore("steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "sh"}}); err == nil {
		t.Error("PayloadCore accepted a toolCallRequest without arguments")
	}
	bad := map[string]any{"tool": map[string]any{"name": "sh"}, "arguments": map[string]any{"cmd": map[string]any{"value": "ls",
		"provenance": map[string]any{"provenance_id": "p1", "origin": "the_internet"}}}}
	if err := s.PayloadCore("steps/toolCallRequest", bad); err == nil {
		t.Error("PayloadCore accepted a provenance with an unknown origin")
	}
	msg := map[string]any{"content": []any{map[string]any{"type": "text", "value": "hi"}}}
	if err := s.Payload("steps/userMessage", msg); err == nil {
		t.Error("userMessage without provenance accepted by the draft")
	}
	if err := s.PayloadCore("steps/userMessage", msg); err != nil {
		t.Errorf("userMessage (Core): %v", err)
	}
	// The current subagent-stop.json (0.1.3) replaces the draft: final_chain_hash is optional.
	stop := map[string]any{"subagent_session_id": rid, "outcome": "completed"}
	if err := s.Payload("steps/subagentStop", stop); err != nil {
		t.Errorf("subagentStop without final_chain_hash: %v", err)
	}
	for _, m := range []string{"steps/sessionStart", "system/ping", "agbom/snapshot", "protocols/MCP/tools/call", "trace/x"} {
		if err := s.Payload(m, map[string]any{}); !errors.Is(err, acsschema.ErrNoSchema) {
			t.Errorf("Payload(%s) = %v, want ErrNoSchema", m, err)
		}
	}
	if err := s.Modifications(map[string]any{"parameter_overrides": map[string]any{"to": "x"}}); err != nil {
		t.Errorf("Modifications: %v", err)
	}
	if err := s.Modifications(map[string]any{"redactions": []any{map[string]any{"replacement": "x"}}}); err == nil {
		t.Error("a redaction without path accepted")
	}
	got := s.PayloadMethods()
	for _, want := range []string{"steps/toolCallRequest", "steps/subagentStop", "steps/memoryContextRetrieval", "steps/postCompact"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("PayloadMethods() = %v, missing %s", got, want)
		}
	}
}

func TestPayloadFile(t *testing.T) {
	for method, want := range map[string]string{
		"steps/toolCallRequest":        "hooks/tool-call-request.json",
		"steps/memoryContextRetrieval": "hooks/memory-context-retrieval.json",
		"steps/sessionStart":           "hooks/session-start.json",
		"system/ping":                  "hooks/system-ping.json",
		"agbom/changed":                "hooks/agbom-changed.json",
		"protocols/MCP/tools/call":     "",
		"handshake/hello":              "",
		"steps/":                       "",
	} {
		if got := acsschema.PayloadFile(method); got != want {
			t.Errorf("PayloadFile(%q) = %q, want %q", method, got, want)
		}
	}
}
