package acsclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

var (
	testIKM   = []byte("correct horse battery staple")
	testKeyID = "k1"
)

// handMAC computes the §10 signature of msg (signature at msg[at] removed)
// with the standard library and jcs directly, sharing no code with the
// package's signer.
func handMAC(t testing.TB, msg map[string]any, at string, ikm []byte, sid string) string {
	t.Helper()
	inner := msg[at].(map[string]any)
	saved, had := inner["signature"]
	delete(inner, "signature")
	b, err := json.Marshal(msg)
	if had {
		inner["signature"] = saved
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := jcs.Transform(b)
	if err != nil {
		t.Fatal(err)
	}
	k, err := hkdf.Key(sha256.New, ikm, nil, sid, 32)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, k)
	m.Write(c)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// fakeGuardian answers one JSON-RPC message (or batch, answered in reverse
// order) as a Guardian would, verifying and signing by hand. A steps/* request
// is answered with the fields in its payload's "answer" object.
func fakeGuardian(t testing.TB, body []byte) []byte {
	v, err := Decode(body)
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	}
	if arr, ok := v.([]any); ok {
		var out []json.RawMessage
		for i := len(arr) - 1; i >= 0; i-- {
			b, _ := json.Marshal(arr[i])
			out = append(out, fakeGuardian(t, b))
		}
		b, _ := json.Marshal(out)
		return b
	}
	req := v.(map[string]any)
	params := req["params"].(map[string]any)
	md := params["metadata"].(map[string]any)
	sid := md["session_id"].(string)
	method := req["method"].(string)
	signed := false
	if sig, ok := params["signature"].(map[string]any); ok {
		if sig["key_id"] != testKeyID || sig["value"] != handMAC(t, req, "params", testIKM, sid) {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req["id"],
				"error": map[string]any{"code": -32004, "message": "signature invalid"}})
			return b
		}
		signed = true
	}
	var result map[string]any
	switch {
	case method == "handshake/hello":
		hello := params["payload"].(map[string]any)
		result = map[string]any{"negotiated_version": "0.1.0", "methods_evaluated": hello["methods_implemented"],
			"selected_transport": hello["transports_supported"].([]any)[0], "timeout_config": map[string]any{"default_ms": 5000}}
	case method == "system/ping":
		echo := params["payload"].(map[string]any)["echo"]
		result = map[string]any{"type": "final", "acs_version": "0.1.0", "request_id": params["request_id"], "decision": "allow",
			"payload": map[string]any{"status": "ok", "echo": echo, "server_timestamp": time.Now().UTC().Format(time.RFC3339)}}
	default:
		result = map[string]any{"type": "final", "acs_version": "0.1.0", "request_id": params["request_id"], "decision": "allow"}
		if a, ok := params["payload"].(map[string]any)["answer"].(map[string]any); ok {
			for k, v := range a {
				result[k] = v
			}
		}
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": result}
	if signed {
		result["signature"] = map[string]any{"algorithm": "HMAC-SHA256", "key_id": testKeyID,
			"value": handMAC(t, resp, "result", testIKM, sid)}
	}
	b, _ := json.Marshal(resp)
	return b
}

func httpGuardian(t *testing.T) (*httptest.Server, *[]http.Header) {
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers = append(headers, r.Header.Clone())
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(fakeGuardian(t, body))
	}))
	t.Cleanup(srv.Close)
	return srv, &headers
}

func TestSignatureRoundTrip(t *testing.T) {
	srv, headers := httpGuardian(t)
	c := New(Options{URL: srv.URL + "/acs", Token: "tok", KeyID: testKeyID, Key: testIKM, AgentID: "agent-1"})
	ctx := context.Background()

	hello, err := c.Handshake(ctx, []string{"steps/toolCallRequest", "system/ping"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyResponse(hello); err != nil {
		t.Fatalf("handshake: %v\n%s", err, hello.Raw)
	}
	if got := (*headers)[0].Get("Authorization"); got != "Bearer tok" {
		t.Errorf("Authorization = %q", got)
	}
	if hello.Result["selected_transport"] != "http" {
		t.Errorf("selected_transport = %v, want http (from the ClientHello)", hello.Result["selected_transport"])
	}

	resp, err := c.Call(ctx, "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "sh"}, "arguments": map[string]any{},
		"answer": map[string]any{"decision": "deny", "reasoning": "no shell <here> & now", "reason_codes": []any{"x"},
			"chain_hash": strings.Repeat("ab", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyResponse(resp); err != nil {
		t.Fatalf("%v\n%s", err, resp.Raw)
	}
	if resp.Decision() != "deny" || resp.ChainHash() != strings.Repeat("ab", 32) || resp.ReasonCodes()[0] != "x" {
		t.Errorf("accessors: %q %q %q", resp.Decision(), resp.ChainHash(), resp.ReasonCodes())
	}

	// One changed byte in the answer fails its signature.
	tampered := bytes.Replace(resp.Raw, []byte(`no shell`), []byte(`no shelL`), 1)
	if bytes.Equal(tampered, resp.Raw) {
		t.Fatal("tamper did not change the answer")
	}
	tr, err := ParseResponse(tampered)
	if err != nil {
		t.Fatal(err)
	}
	tr.Request = resp.Request
	if err := c.VerifyResponse(tr); err == nil || !strings.Contains(err.Error(), "result.signature.value does not verify") {
		t.Errorf("tampered answer: VerifyResponse = %v", err)
	}
	// A missing signature is caught too.
	delete(tr.Result, "signature")
	if err := c.VerifyResponse(tr); err == nil || !strings.Contains(err.Error(), "result.signature is missing") {
		t.Errorf("unsigned answer: VerifyResponse = %v", err)
	}

	// A request changed after signing is refused by the (hand-verifying)
	// Guardian; re-signing makes it good again.
	e := c.Request("steps/userMessage", map[string]any{"content": []any{}})
	e.Params["timestamp"] = "2026-01-01T00:00:00Z"
	resp, err = c.Send(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode() != -32004 {
		t.Fatalf("tampered request: %s", resp.Raw)
	}
	if err := c.VerifyResponse(resp); err != nil {
		t.Errorf("an unsigned -32004 is acceptable: %v", err)
	}
	if err := e.Sign(); err != nil {
		t.Fatal(err)
	}
	if resp, err = c.Send(ctx, e); err != nil || resp.Decision() != "allow" {
		t.Fatalf("re-signed: %v %s", err, resp.Raw)
	}

	// The wrong key is refused.
	resp, err = c.Call(ctx, "steps/userMessage", nil, WithKey(testKeyID, []byte("other")))
	if err != nil || resp.ErrorCode() != -32004 {
		t.Fatalf("wrong key: %v %s", err, resp.Raw)
	}

	// Ping is unsigned and its answer likewise.
	resp, err = c.Ping(ctx, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Request.Signed() {
		t.Error("ping was signed")
	}
	if err := c.VerifyResponse(resp); err != nil {
		t.Errorf("ping: %v\n%s", err, resp.Raw)
	}
}

func TestRequestShape(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	c := NewWithTransport(&HTTPTransport{URL: "https://g.example/acs"}, Options{KeyID: testKeyID, Key: testIKM,
		SessionID: "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f", Now: func() time.Time { return now }})
	c.SetTurnID("turn-1")
	first := c.Request("steps/turnEnd", nil)
	e := c.Request("steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "sh"}},
		WithChainHash(strings.Repeat("0", 64)), WithNonce("0123456789abcdef"), WithRequestID(first.RequestID()))
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeObj(t, string(b))
	p := m["params"].(map[string]any)
	md := p["metadata"].(map[string]any)
	checks := map[string]any{
		"jsonrpc":     m["jsonrpc"],
		"method":      m["method"],
		"acs_version": p["acs_version"],
		"timestamp":   p["timestamp"],
		"agent_id":    md["agent_id"],
		"session_id":  md["session_id"],
		"turn_id":     md["turn_id"],
		"chain_hash":  md["session_state"].(map[string]any)["chain_hash"],
		"nonce":       p["nonce"],
		"request_id":  p["request_id"],
	}
	want := map[string]any{
		"jsonrpc": "2.0", "method": "steps/toolCallRequest", "acs_version": "0.1.0",
		"timestamp": "2026-05-06T06:08:09.123456789Z", "agent_id": DefaultAgentID,
		"session_id": "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f", "turn_id": "turn-1",
		"chain_hash": strings.Repeat("0", 64), "nonce": "0123456789abcdef", "request_id": first.RequestID(),
	}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %v, want %v", k, checks[k], w)
		}
	}
	if m["id"] == p["request_id"] || m["id"] == "" {
		t.Errorf("JSON-RPC id %v should be its own UUID", m["id"])
	}
	sig := p["signature"].(map[string]any)
	if sig["algorithm"] != "HMAC-SHA256" || sig["key_id"] != testKeyID || sig["value"] != handMAC(t, m, "params", testIKM, "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f") {
		t.Errorf("signature %v does not match the hand-computed one", sig)
	}
	if err := Verify(m, "params", testIKM, testKeyID, "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f"); err != nil {
		t.Error(err)
	}
	if err := Verify(m, "params", testIKM, testKeyID, "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e30"); err == nil {
		t.Error("the signature verified under another session's key")
	}
	if hello := c.ClientHello(nil); hello["transports_supported"].([]string)[0] != "https" {
		t.Errorf("ClientHello over https: %v", hello)
	}
	u := c.Request("steps/sessionEnd", nil, Unsigned, WithoutParam("acs_version"))
	if u.Signed() || u.Params["acs_version"] != nil {
		t.Errorf("Unsigned/WithoutParam: %v", u.Params)
	}
	if NewWithTransport(nil, Options{}).SessionID() == "" {
		t.Error("no session id generated")
	}
}

// TestVerifyDecisions feeds VerifyResponse answers missing what each
// disposition requires.
func TestVerifyDecisions(t *testing.T) {
	srv, _ := httpGuardian(t)
	c := New(Options{URL: srv.URL, KeyID: testKeyID, Key: testIKM})
	good := strings.Repeat("0a", 32)
	tests := []struct {
		name   string
		answer map[string]any
		want   string // "" for none
	}{
		{"allow", map[string]any{"decision": "allow", "chain_hash": good}, ""},
		{"maybe", map[string]any{"decision": "maybe", "reasoning": "r"}, "result.decision is maybe"},
		{"deny without reasoning", map[string]any{"decision": "deny"}, "result.reasoning is missing on deny"},
		{"modify", map[string]any{"decision": "modify", "reasoning": "r",
			"modifications": map[string]any{"redactions": []any{map[string]any{"path": "/arguments/x/value"}}, "parameter_overrides": map[string]any{"y": 1}}}, ""},
		{"modify without modifications", map[string]any{"decision": "modify", "reasoning": "r"}, "modifications is missing"},
		{"modify mixing shapes", map[string]any{"decision": "modify", "reasoning": "r",
			"modifications": map[string]any{"modified_content": "x", "parameter_overrides": map[string]any{"y": 1}}}, "combines modified_content"},
		{"ask", map[string]any{"decision": "ask", "reasoning": "r", "ask_details": map[string]any{"approver": map[string]any{"type": "human", "id": "ops"}}}, ""},
		{"ask without details", map[string]any{"decision": "ask", "reasoning": "r"}, "ask_details is missing"},
		{"defer", map[string]any{"decision": "defer", "reasoning": "r",
			"defer_details": map[string]any{"resolution_method": "out_of_band", "resolution_timeout_ms": 30000, "timeout_decision": "deny"}}, ""},
		{"defer incomplete", map[string]any{"decision": "defer", "reasoning": "r",
			"defer_details": map[string]any{"resolution_method": "out_of_band", "resolution_timeout_ms": 1.5}}, "resolution_timeout_ms 1.5 is not an integer"},
		{"defer without timeout_decision", map[string]any{"decision": "defer", "reasoning": "r",
			"defer_details": map[string]any{"resolution_method": "m", "resolution_timeout_ms": 1}}, "timeout_decision is <nil>"},
		{"chain_hash uppercase", map[string]any{"decision": "allow", "chain_hash": strings.ToUpper(good)}, "chain_hash"},
		{"wrong request_id", map[string]any{"decision": "allow", "request_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}, "result.request_id is 7c9e6679"},
		{"type progress", map[string]any{"decision": "allow", "type": "progress"}, `result.type is progress`},
		{"reason_codes not strings", map[string]any{"decision": "deny", "reasoning": "r", "reason_codes": []any{1}}, "reason_codes holds 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Call(context.Background(), "steps/toolCallRequest", map[string]any{"answer": tt.answer})
			if err != nil {
				t.Fatal(err)
			}
			err = c.VerifyResponse(resp)
			if tt.want == "" && err != nil {
				t.Errorf("VerifyResponse = %v", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("VerifyResponse = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	srv, _ := httpGuardian(t)
	c := New(Options{URL: srv.URL, KeyID: testKeyID, Key: testIKM})
	a := c.Request("steps/userMessage", map[string]any{"answer": map[string]any{"decision": "allow"}})
	b := c.Request("steps/agentResponse", map[string]any{"answer": map[string]any{"decision": "deny", "reasoning": "no"}})
	rs, err := c.Batch(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Decision() != "allow" || rs[1].Decision() != "deny" || rs[1].Request != b {
		t.Fatalf("batch answers not matched by id: %+v", rs)
	}
	for _, r := range rs {
		if err := c.VerifyResponse(r); err != nil {
			t.Error(err)
		}
	}
}

// TestStdio runs the client against a Guardian on a pipe pair that adds a
// Content-Type header to its frames.
func TestStdio(t *testing.T) {
	toGuardian, clientOut := io.Pipe()
	clientIn, fromGuardian := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer fromGuardian.Close()
		br := bufio.NewReader(toGuardian)
		for {
			f, err := ReadFrame(br)
			if err != nil {
				return
			}
			ans := fakeGuardian(t, f)
			io.WriteString(fromGuardian, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: "+
				strconv.Itoa(len(ans))+"\r\n\r\n"+string(ans))
		}
	}()
	c := NewStdio(clientIn, clientOut, Options{KeyID: testKeyID, Key: testIKM})
	ctx := context.Background()
	hello, err := c.Handshake(ctx, []string{"steps/userMessage"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyResponse(hello); err != nil || hello.Result["selected_transport"] != "stdio" {
		t.Fatalf("%v %s", err, hello.Raw)
	}
	for i := 0; i < 3; i++ {
		resp, err := c.Call(ctx, "steps/userMessage", map[string]any{"answer": map[string]any{"decision": "allow"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.VerifyResponse(resp); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	<-done
	if _, err := c.Call(ctx, "steps/userMessage", nil); err == nil {
		t.Error("a call after the Guardian closed succeeded")
	}
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"Content-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\nnull", []string{"{}", "null"}, ""},
		{"X-A: b\r\ncontent-length:3\r\nContent-Type: x\r\n\r\n[1]", []string{"[1]"}, ""},
		{"Content-Length: 2\n\n{}\r\nContent-Length: 2\r\n\r\n[]", []string{"{}", "[]"}, ""},
		{"Content-Type: x\r\n\r\n{}", nil, "without Content-Length"},
		{"Content-Length: 5\r\n\r\n{}", nil, "unexpected EOF"},
		{"Content-Length: -1\r\n\r\n", nil, "bad Content-Length"},
		{"garbage\r\n\r\n", nil, "malformed frame header"},
	}
	for _, tt := range tests {
		br := bufio.NewReader(strings.NewReader(tt.in))
		var got []string
		var err error
		for {
			var f []byte
			f, err = ReadFrame(br)
			if err != nil {
				break
			}
			got = append(got, string(f))
		}
		if err == io.EOF {
			err = nil
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: frames %q, err %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
	var buf bytes.Buffer
	WriteFrame(&buf, []byte(`{"a":"é"}`))
	if buf.String() != "Content-Length: 10\r\n\r\n{\"a\":\"é\"}" {
		t.Errorf("WriteFrame: %q", buf.String())
	}
}

func TestStatusError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	}))
	defer srv.Close()
	_, err := New(Options{URL: srv.URL}).Call(context.Background(), "steps/userMessage", nil)
	if se, ok := err.(*StatusError); !ok || se.Code != 401 {
		t.Errorf("no token: %v", err)
	}
	resp, err := New(Options{URL: srv.URL, Token: "t"}).Call(context.Background(), "steps/userMessage", nil)
	if err != nil || resp.HTTPStatus != 400 || resp.ErrorCode() != -32700 {
		t.Errorf("JSON-RPC error on 400: %v %+v", err, resp)
	}
	body, err := New(Options{URL: srv.URL, Token: "t"}).SendRaw(context.Background(), []byte("{"))
	if se, ok := err.(*StatusError); !ok || se.Code != 400 || !bytes.Contains(body, []byte("-32700")) {
		t.Errorf("SendRaw: %v %s", err, body)
	}
}
