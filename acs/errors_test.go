package acs

import (
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/acsclient"
)

// TestErrorCodes: one case (or more) per JSON-RPC and ACS error code, each
// checking the code, that data names the reason and, where one is at
// fault, the field.
func TestErrorCodes(t *testing.T) {
	type tc struct {
		name  string
		opts  func(*Options)
		run   func(f *fixture, s *session) map[string]any
		code  int
		field string
	}
	step := func(s *session, mod func(map[string]any)) map[string]any {
		return s.send(s.msg("steps/toolCallRequest", toolCall("ls", map[string]any{"dir": "."}), mod))
	}
	cases := []tc{
		{name: "parse error", run: func(f *fixture, s *session) map[string]any { return f.raw([]byte(`{"jsonrpc":`)) }, code: CodeParseError},
		{name: "duplicate key", run: func(f *fixture, s *session) map[string]any {
			return f.raw([]byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"system/ping","params":{}}`))
		}, code: CodeInvalidRequest},
		{name: "not an object", run: func(f *fixture, s *session) map[string]any { return f.raw([]byte(`"hello"`)) }, code: CodeInvalidRequest},
		{name: "jsonrpc missing", run: func(f *fixture, s *session) map[string]any {
			return f.raw([]byte(`{"id":1,"method":"system/ping","params":{}}`))
		}, code: CodeInvalidRequest, field: "jsonrpc"},
		{name: "notification", run: func(f *fixture, s *session) map[string]any {
			return f.raw([]byte(`{"jsonrpc":"2.0","method":"system/ping","params":{}}`))
		}, code: CodeInvalidRequest, field: "id"},
		{name: "empty batch", run: func(f *fixture, s *session) map[string]any { return f.raw([]byte(`[]`)) }, code: CodeInvalidRequest},
		{name: "unknown method", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			return s.call("steps/teleport", map[string]any{})
		}, code: CodeMethodNotFound, field: "method"},
		{name: "A2A is reserved", run: func(f *fixture, s *session) map[string]any {
			return s.call("protocols/A2A/message/send", map[string]any{})
		}, code: CodeMethodNotFound, field: "method"},
		{name: "params missing", run: func(f *fixture, s *session) map[string]any {
			return f.raw([]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/userMessage"}`))
		}, code: CodeInvalidParams, field: "params"},
		{name: "request_id not a UUID", run: func(f *fixture, s *session) map[string]any {
			return step(s, func(p map[string]any) { p["request_id"] = "r-1" })
		}, code: CodeInvalidParams, field: "params.request_id"},
		{name: "timestamp not a date", run: func(f *fixture, s *session) map[string]any {
			return step(s, func(p map[string]any) { p["timestamp"] = "yesterday" })
		}, code: CodeInvalidParams, field: "params.timestamp"},
		{name: "session_id missing", run: func(f *fixture, s *session) map[string]any {
			return step(s, func(p map[string]any) { delete(p["metadata"].(map[string]any), "session_id") })
		}, code: CodeInvalidParams, field: "params.metadata.session_id"},
		{name: "nonce too short", run: func(f *fixture, s *session) map[string]any {
			return step(s, func(p map[string]any) { p["nonce"] = "abc" })
		}, code: CodeInvalidParams, field: "params.nonce"},
		{name: "payload field missing", run: func(f *fixture, s *session) map[string]any {
			return s.call("steps/toolCallRequest", map[string]any{"tool": map[string]any{}, "arguments": map[string]any{}})
		}, code: CodeInvalidParams, field: "params.payload.tool.name"},
		{name: "payload enum", run: func(f *fixture, s *session) map[string]any {
			return s.call("steps/toolCallResult", map[string]any{"tool": map[string]any{"name": "ls"}, "exit_status": "meh", "outputs": []any{}})
		}, code: CodeInvalidParams, field: "params.payload.exit_status"},
		{name: "payload array item", run: func(f *fixture, s *session) map[string]any {
			return s.call("steps/userMessage", map[string]any{"content": []any{map[string]any{"type": "text"}}})
		}, code: CodeInvalidParams, field: "params.payload.content[0].value"},
		{name: "wrapped MCP method mismatch", run: func(f *fixture, s *session) map[string]any {
			return s.call("protocols/MCP/tools/call", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		}, code: CodeInvalidParams, field: "params.payload.method"},
		{name: "ping malformed is not an ACS error", run: func(f *fixture, s *session) map[string]any {
			return s.send(s.msg("system/ping", map[string]any{}, func(p map[string]any) { p["acs_version"] = "9.0.0" }))
		}, code: CodeInvalidParams, field: "params.acs_version"},
		{name: "session refused: another agent", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			s.agent = "agent-2"
			return step(s, nil)
		}, code: CodeSessionRefused, field: "params.metadata.agent_id"},
		{name: "session refused: ended", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			if r := s.call("steps/sessionEnd", map[string]any{"session_reason": "completed"}); r["error"] != nil {
				t.Fatalf("sessionEnd: %v", r["error"])
			}
			return step(s, nil)
		}, code: CodeSessionRefused, field: "params.metadata.session_id"},
		{name: "session refused: no common transport", run: func(f *fixture, s *session) map[string]any {
			p := helloPayload("steps/toolCallRequest")
			p["transports_supported"] = []any{"stdio"}
			return s.call(MethodHello, p)
		}, code: CodeSessionRefused, field: "params.payload.transports_supported"},
		{name: "unsupported version at the handshake", run: func(f *fixture, s *session) map[string]any {
			p := helloPayload("steps/toolCallRequest")
			p["acs_versions_supported"] = []any{"1.0.0", "0.2.0"}
			return s.call(MethodHello, p)
		}, code: CodeUnsupportedVersion, field: "params.payload.acs_versions_supported"},
		{name: "unsupported version on a step", run: func(f *fixture, s *session) map[string]any {
			return step(s, func(p map[string]any) { p["acs_version"] = "1.0.0" })
		}, code: CodeUnsupportedVersion, field: "params.acs_version"},
		{name: "provenance required", opts: func(o *Options) { o.RequireProvenance = true }, run: func(f *fixture, s *session) map[string]any {
			return s.call(MethodHello, helloPayload("steps/toolCallRequest"))
		}, code: CodeProvenanceRequired, field: "params.payload.provenance_producer"},
		{name: "no handshake", run: func(f *fixture, s *session) map[string]any { return step(s, nil) },
			code: CodeCapabilityNotNegotiated, field: "params.metadata.session_id"},
		{name: "method not negotiated", run: func(f *fixture, s *session) map[string]any {
			s.call(MethodHello, helloPayload("steps/userMessage"))
			return step(s, nil)
		}, code: CodeCapabilityNotNegotiated, field: "method"},
		{name: "signature missing", run: func(f *fixture, s *session) map[string]any {
			s.keyID = ""
			return s.call(MethodHello, helloPayload("steps/toolCallRequest"))
		}, code: CodeSignatureInvalid, field: "params.signature"},
		{name: "signature wrong", run: func(f *fixture, s *session) map[string]any {
			m := s.msg(MethodHello, helloPayload("steps/toolCallRequest"), nil)
			m["params"].(map[string]any)["metadata"].(map[string]any)["agent_id"] = "mallory" // changed after signing
			return s.send(m)
		}, code: CodeSignatureInvalid, field: "params.signature.value"},
		{name: "signature lifted to another session", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			m := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
			other := f.session()
			other.hello()
			m["params"].(map[string]any)["metadata"].(map[string]any)["session_id"] = other.id
			return s.send(m)
		}, code: CodeSignatureInvalid, field: "params.signature.value"},
		{name: "signature unknown key", run: func(f *fixture, s *session) map[string]any {
			s.keyID = "k9"
			return s.call(MethodHello, helloPayload("steps/toolCallRequest"))
		}, code: CodeSignatureInvalid, field: "params.signature.key_id"},
		{name: "signature algorithm", run: func(f *fixture, s *session) map[string]any {
			m := s.msg(MethodHello, helloPayload("steps/toolCallRequest"), nil)
			m["params"].(map[string]any)["signature"].(map[string]any)["algorithm"] = "ML-DSA-65"
			return s.send(m)
		}, code: CodeSignatureInvalid, field: "params.signature.algorithm"},
		{name: "replayed request_id", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			m := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
			if r := s.send(m); r["error"] != nil {
				t.Fatalf("first: %v", r["error"])
			}
			return s.send(m)
		}, code: CodeReplayDetected, field: "params.request_id"},
		{name: "replayed nonce", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			nonce := func(p map[string]any) { p["nonce"] = "n-0123456789abcdef" }
			if r := s.send(s.msg("steps/toolCallRequest", toolCall("ls", nil), nonce)); r["error"] != nil {
				t.Fatalf("first: %v", r["error"])
			}
			return s.send(s.msg("steps/toolCallRequest", toolCall("ls", nil), nonce))
		}, code: CodeReplayDetected, field: "params.nonce"},
		{name: "replayed handshake", run: func(f *fixture, s *session) map[string]any {
			m := s.msg(MethodHello, helloPayload("steps/toolCallRequest"), nil)
			s.send(m)
			return s.send(m)
		}, code: CodeReplayDetected, field: "params.request_id"},
		{name: "stale timestamp", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			return step(s, func(p map[string]any) { p["timestamp"] = f.now.Add(-6 * time.Minute).UTC().Format(time.RFC3339) })
		}, code: CodeTimestampOutOfWindow, field: "params.timestamp"},
		{name: "future timestamp", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			return step(s, func(p map[string]any) { p["timestamp"] = f.now.Add(6 * time.Minute).UTC().Format(time.RFC3339) })
		}, code: CodeTimestampOutOfWindow, field: "params.timestamp"},
		{name: "chain mismatch", run: func(f *fixture, s *session) map[string]any {
			s.hello()
			return step(s, func(p map[string]any) {
				p["metadata"].(map[string]any)["session_state"] = map[string]any{"chain_hash": strings.Repeat("ab", 32)}
			})
		}, code: CodeChainMismatch, field: "params.metadata.session_state.chain_hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.opts)
			r := c.run(f, f.session())
			if got := errCode(r); got != c.code {
				t.Fatalf("code %d, want %d: %v", got, c.code, r)
			}
			data := r["error"].(map[string]any)["data"].(map[string]any)
			if data["reason"] != errorNames[c.code] || data["message"] == "" {
				t.Errorf("data %v: want reason %q and a message", data, errorNames[c.code])
			}
			if c.field != "" && data["field"] != c.field {
				t.Errorf("field %v, want %q (%v)", data["field"], c.field, r["error"])
			}
			if c.code == CodeTimestampOutOfWindow && data["skew_window_ms"] != float64(300000) {
				t.Errorf("skew_window_ms %v", data["skew_window_ms"])
			}
			if c.code == CodeUnsupportedVersion && data["supported_versions"] == nil {
				t.Errorf("no supported_versions: %v", data)
			}
		})
	}
}

// TestPingAlwaysAllowed: unsigned, before any handshake, with signatures
// required: allow, the echo back, nothing in a chain.
func TestPingAlwaysAllowed(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	s.keyID = ""
	res := result(t, s.call(MethodPing, map[string]any{"echo": "hi"}))
	p, _ := res["payload"].(map[string]any)
	if res["decision"] != "allow" || p["status"] != "ok" || p["echo"] != "hi" || p["server_timestamp"] == "" {
		t.Fatalf("ping: %v", res)
	}
	if res["chain_hash"] != nil || res["signature"] != nil {
		t.Errorf("an unsigned ping: no chain_hash, no signature: %v", res)
	}
	if _, err := f.store.ACSSession(t.Context(), s.id); err == nil {
		t.Error("a ping made a session")
	}
}

// TestErrorAnswersSigned: an error answering a request that authenticated
// is signed at error.signature (checked by the independent client); one
// answering a request that did not authenticate is not (no key was
// established).
func TestErrorAnswersSigned(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	s.hello()
	m := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
	s.send(m)
	replayed := s.send(m) // authenticated, refused: -32005
	if errCode(replayed) != CodeReplayDetected {
		t.Fatalf("%v", replayed)
	}
	if err := acsclient.Verify(replayed, "error", testKey, "k1", s.id); err != nil {
		t.Fatalf("a signed request's error answer: %v", err)
	}
	forged := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
	forged["params"].(map[string]any)["signature"].(map[string]any)["value"] = "AAAA"
	bad := s.send(forged)
	if errCode(bad) != CodeSignatureInvalid || bad["error"].(map[string]any)["signature"] != nil {
		t.Fatalf("an unauthenticated request's error answer is unsigned: %v", bad)
	}
}
