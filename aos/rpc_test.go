package aos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// ctxJSON is a minimal StepContext for hand-written requests.
const ctxJSON = `"context":{"agent":{"id":"a1","name":"A"},"session":{"id":"s1"},"turnId":"t1","stepId":"st1","timestamp":"2026-01-01T00:00:00Z"}`

func req(method, params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
}

// TestJSONRPCErrors checks every JSON-RPC error the endpoint answers, with
// the exact message, and the id it echoes.
func TestJSONRPCErrors(t *testing.T) {
	cases := []struct {
		name, body string
		code       int
		message    string
		id         string // raw id of the response
	}{
		{"bad JSON", `{"jsonrpc":"2.0",`, CodeParseError, "parse error: unexpected end of JSON input at offset 17", "null"},
		{"bad JSON inside params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":tru}}`, CodeParseError, "parse error: invalid literal, expected true at offset 54", "null"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, CodeParseError, `parse error: invalid character 'x' after top-level value at offset 41`, "null"},
		{"empty body", ``, CodeParseError, "parse error: empty body at offset 0", "null"},
		{"not an object", `42`, CodeInvalidRequest, "invalid request: expected a JSON-RPC request object", "null"},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`, "1"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`, "1"},
		{"numeric jsonrpc", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`, "1"},
		{"missing method", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "invalid request: missing method", "1"},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":1}`, CodeInvalidRequest, "invalid request: method must be a string", "1"},
		{"numeric method, no id", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, CodeInvalidRequest, "invalid request: method must be a string", "null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "invalid request: id must be a string, a number or null", "null"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "invalid request: id must be a string, a number or null", "null"},
		{"params as string", `{"jsonrpc":"2.0","id":"x","method":"steps/message","params":"hi"}`, CodeInvalidRequest, "invalid request: params must be an object or an array", `"x"`},
		{"duplicate key (a secret the policies would not see)", `{"jsonrpc":"2.0","id":"x","method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e","toolId":"t","inputs":[{"name":"k","value":"AKIAIOSFODNN7EXAMPLE","value":"x"}]},"context":{}}}`, CodeInvalidRequest, `invalid request: duplicate key "value" in params.toolCallRequest.inputs[0]`, "null"},
		{"duplicate id", `{"jsonrpc":"2.0","id":"x","id":"y","method":"ping"}`, CodeInvalidRequest, `invalid request: duplicate key "id" at the top level`, "null"},
		{"keys differing only in case", `{"jsonrpc":"2.0","id":"x","method":"steps/message","params":{"message":{"role":"user","Role":"system","content":[]},"context":{}}}`, CodeInvalidRequest, `invalid request: keys "role" and "Role" differ only in case in params.message`, "null"},
		{"params as array: a valid request, invalid params", `{"jsonrpc":"2.0","id":"x","method":"steps/message","params":[1]}`, CodeInvalidParams, "invalid params: params: expected an object, got an array", `"x"`},
		{"params as array, unknown method", `{"jsonrpc":"2.0","id":"x","method":"steps/nope","params":[]}`, CodeMethodNotFound, "method not found: steps/nope", `"x"`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"steps/foo","params":{}}`, CodeMethodNotFound, "method not found: steps/foo", "1"},
		{"empty batch", `[]`, CodeInvalidRequest, "invalid request: empty batch", "null"},

		// -32602: the message names the field.
		{"steps: missing context", req(MethodMemoryStore, `"memory":[]`), CodeInvalidParams, "invalid params: params: missing context", "1"},
		{"steps: context not an object", req(MethodMemoryStore, `"context":[],"memory":[]`), CodeInvalidParams, "invalid params: params.context: expected an object, got an array", "1"},
		{"steps: agent id not a string", req(MethodMemoryStore, `"context":{"agent":{"id":7}},"memory":[]`), CodeInvalidParams, "invalid params: params.context.agent.id: expected a string, got a number", "1"},
		{"steps: tools element", req(MethodMemoryStore, `"context":{"agent":{"tools":[{"id":"x","name":3}]}},"memory":[]`), CodeInvalidParams, "invalid params: params.context.agent.tools[0].name: expected a string, got a number", "1"},
		{"steps: user organization", req(MethodMemoryStore, `"context":{"user":{"organization":"acme"}},"memory":[]`), CodeInvalidParams, "invalid params: params.context.user.organization: expected an object, got a string", "1"},
		{"steps: reasoning", req(MethodMemoryStore, ctxJSON+`,"memory":[],"reasoning":1`), CodeInvalidParams, "invalid params: params.reasoning: expected a string, got a number", "1"},
		{"agentTrigger: missing trigger", req(MethodAgentTrigger, ctxJSON), CodeInvalidParams, "invalid params: params: missing trigger", "1"},
		{"agentTrigger: content", req(MethodAgentTrigger, ctxJSON+`,"trigger":{"content":{}}`), CodeInvalidParams, "invalid params: params.trigger.content: expected an array, got an object", "1"},
		{"toolCallRequest: missing", req(MethodToolCallRequest, ctxJSON), CodeInvalidParams, "invalid params: params: missing toolCallRequest", "1"},
		{"toolCallRequest: inputs", req(MethodToolCallRequest, ctxJSON+`,"toolCallRequest":{"executionId":"e","toolId":"t","inputs":{}}`), CodeInvalidParams, "invalid params: params.toolCallRequest.inputs: expected an array, got an object", "1"},
		{"toolCallRequest: missing toolId", req(MethodToolCallRequest, ctxJSON+`,"toolCallRequest":{"executionId":"e","inputs":[]}`), CodeInvalidParams, "invalid params: params.toolCallRequest: missing toolId", "1"},
		{"toolCallRequest: input name", req(MethodToolCallRequest, ctxJSON+`,"toolCallRequest":{"executionId":"e","toolId":"t","inputs":[{"name":"a","value":1},{"value":2}]}`), CodeInvalidParams, "invalid params: params.toolCallRequest.inputs[1]: missing name", "1"},
		{"toolCallRequest: input not an object", req(MethodToolCallRequest, ctxJSON+`,"toolCallRequest":{"executionId":"e","toolId":"t","inputs":["a"]}`), CodeInvalidParams, "invalid params: params.toolCallRequest.inputs[0]: expected an object, got a string", "1"},
		{"toolCallResult: missing", req(MethodToolCallResult, ctxJSON), CodeInvalidParams, "invalid params: params: missing toolCallResult", "1"},
		{"toolCallResult: nested result", req(MethodToolCallResult, ctxJSON+`,"toolCallResult":{"executionId":"e"}`), CodeInvalidParams, "invalid params: params.toolCallResult: missing result", "1"},
		{"toolCallResult: flat executionId", req(MethodToolCallResult, ctxJSON+`,"executionId":5,"result":{}`), CodeInvalidParams, "invalid params: params.executionId: expected a string, got a number", "1"},
		{"toolCallResult: isError", req(MethodToolCallResult, ctxJSON+`,"executionId":"e","result":{"outputs":[],"isError":"no"}`), CodeInvalidParams, "invalid params: params.result.isError: expected a boolean, got a string", "1"},
		{"message: missing", req(MethodMessage, ctxJSON), CodeInvalidParams, "invalid params: params: missing message", "1"},
		{"message: role", req(MethodMessage, ctxJSON+`,"message":{"role":"bot","content":[]}`), CodeInvalidParams, "invalid params: params.message.role: expected one of user, agent, system", "1"},
		{"message: missing role", req(MethodMessage, ctxJSON+`,"message":{"content":[]}`), CodeInvalidParams, "invalid params: params.message: missing role", "1"},
		{"message: content part text", req(MethodMessage, ctxJSON+`,"message":{"role":"user","content":[{"kind":"text","text":1}]}`), CodeInvalidParams, "invalid params: params.message.content[0].text: expected a string, got a number", "1"},
		{"message: citation", req(MethodMessage, ctxJSON+`,"message":{"role":"user","content":[]},"citation":{}`), CodeInvalidParams, "invalid params: params.citation: expected an array, got an object", "1"},
		{"memoryContextRetrieval: missing memory", req(MethodMemoryContextRetrieval, ctxJSON), CodeInvalidParams, "invalid params: params: missing memory", "1"},
		{"memoryStore: memory element", req(MethodMemoryStore, ctxJSON+`,"memory":["a",2]`), CodeInvalidParams, "invalid params: params.memory[1]: expected a string, got a number", "1"},
		{"knowledgeRetrieval: missing results", req(MethodKnowledgeRetrieval, ctxJSON+`,"knowledgeStep":{"query":"q"}`), CodeInvalidParams, "invalid params: params.knowledgeStep: missing results", "1"},
		{"knowledgeRetrieval: keywords", req(MethodKnowledgeRetrieval, ctxJSON+`,"knowledgeStep":{"keywords":[1],"results":[]}`), CodeInvalidParams, "invalid params: params.knowledgeStep.keywords[0]: expected a string, got a number", "1"},
		{"MCP: missing message", req(MethodMCP, `"reasoning":"r"`), CodeInvalidParams, "invalid params: params: missing message", "1"},
		{"MCP: message not JSON-RPC", req(MethodMCP, `"message":{"foo":1}`), CodeInvalidParams, "invalid params: params.message: expected an MCP JSON-RPC message (jsonrpc, method, result or error)", "1"},
		{"MCP: tools/call name", req(MethodMCP, `"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`), CodeInvalidParams, "invalid params: params.message.params: missing name", "1"},
		{"MCP: unwrapped arguments", req(MethodMCP, `"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}`), CodeInvalidParams, "invalid params: params.params.arguments: expected an object, got an array", "1"},
		{"MCP: method type", req(MethodMCP, `"jsonrpc":"2.0","id":1,"method":5`), CodeInvalidParams, "invalid params: params.method: expected a string, got a number", "1"},
		{"A2A: missing message", req(MethodA2A, ``), CodeInvalidParams, "invalid params: params: missing message", "1"},
		{"A2A: message parts", req(MethodA2A, `"message":{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":"hi"}}}`), CodeInvalidParams, "invalid params: params.message.params.message.parts: expected an array, got a string", "1"},
		{"A2A hook: payload type", req("message/send", `"payload":"x"`), CodeInvalidParams, "invalid params: params.payload: expected an object, got a string", "1"},
		{"A2A hook: payload not JSON-RPC", req("tasks/get", `"payload":{"id":"t1"}`), CodeInvalidParams, "invalid params: params.payload: expected an A2A JSON-RPC message (jsonrpc, method, result or error)", "1"},
		{"A2A hook: from agent", req("message/send", `"payload":{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}},"context":{"from":{"agent":{"name":1}}}`), CodeInvalidParams, "invalid params: params.context.from.agent.name: expected a string, got a number", "1"},
		{"A2A hook: unwrapped message", req("message/send", `"message":{"role":"user","parts":[{"kind":"text","text":false}]}`), CodeInvalidParams, "invalid params: params.message.parts[0].text: expected a string, got a boolean", "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, st := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
			resp := h.Handle(context.Background(), []byte(tc.body))
			var got struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *Error          `json:"error"`
				Result  any             `json:"result"`
			}
			if err := json.Unmarshal(resp, &got); err != nil {
				t.Fatalf("response is not JSON: %v: %s", err, resp)
			}
			if got.JSONRPC != "2.0" || got.Error == nil || got.Result != nil {
				t.Fatalf("not an error response: %s", resp)
			}
			if got.Error.Code != tc.code || got.Error.Message != tc.message {
				t.Errorf("error = %d %q, want %d %q", got.Error.Code, got.Error.Message, tc.code, tc.message)
			}
			if string(got.ID) != tc.id {
				t.Errorf("id = %s, want %s", got.ID, tc.id)
			}
			if tc.code == CodeInvalidParams && !strings.Contains(tc.message, got.Error.Data["field"].(string)+": ") {
				t.Errorf("data.field = %v does not name the field of %q", got.Error.Data["field"], tc.message)
			}
			if n := len(st.Records()); n != 0 {
				t.Errorf("%d records for an error", n)
			}
		})
	}
}

// TestIDEcho checks that ids come back byte for byte.
func TestIDEcho(t *testing.T) {
	for _, id := range []string{`1`, `1.0`, `-0`, `1e3`, `"x"`, `"\u0041b"`, `null`, `12345678901234567890`} {
		t.Run(id, func(t *testing.T) {
			h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Modify}))
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
				`{"jsonrpc":"2.0","id": ` + id + ` ,"method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":[]}}`,
				`{"jsonrpc":"2.0","id":` + id + `,"method":"steps/nope"}`,
				`{"jsonrpc":"2.0","id":` + id + `,"method":"steps/message","params":{}}`,
			} {
				resp := string(h.Handle(context.Background(), []byte(body)))
				if !strings.HasPrefix(resp, `{"jsonrpc":"2.0","id":`+id+`,`) {
					t.Errorf("response %s does not echo id %s", resp, id)
				}
				if strings.Contains(resp, "modifiedRequest") && !strings.Contains(resp, `"modifiedRequest":{"jsonrpc":"2.0","id":`+id+`,`) {
					t.Errorf("modifiedRequest does not echo id %s: %s", id, resp)
				}
			}
		})
	}
}

func TestBatch(t *testing.T) {
	h, st := newTestHandler(fixed(warden.Decision{Verdict: warden.Deny, Reason: "no"}))
	mem := `"method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":["x"]}`
	body := `[{"jsonrpc":"2.0","id":1,` + mem + `}, {"jsonrpc":"2.0",` + mem + `}, 5, {"jsonrpc":"2.0","id":"p","method":"ping"}, {"jsonrpc":"2.0","method":"steps/nope"}, {"jsonrpc":"2.0","id":2,"method":"steps/nope"}]`
	var got []struct {
		ID     json.RawMessage `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *Error          `json:"error"`
	}
	resp := h.Handle(context.Background(), []byte(body))
	if err := json.Unmarshal(resp, &got); err != nil {
		t.Fatalf("%v: %s", err, resp)
	}
	if len(got) != 4 {
		t.Fatalf("%d responses, want 4 (notifications omitted): %s", len(got), resp)
	}
	if string(got[0].ID) != "1" || got[0].Result["decision"] != "deny" {
		t.Errorf("[0] = %s", resp)
	}
	if string(got[1].ID) != "null" || got[1].Error == nil || got[1].Error.Code != CodeInvalidRequest {
		t.Errorf("[1] = %s", resp)
	}
	if string(got[2].ID) != `"p"` || got[2].Result["status"] != "connected" {
		t.Errorf("[2] = %s", resp)
	}
	if string(got[3].ID) != "2" || got[3].Error == nil || got[3].Error.Code != CodeMethodNotFound {
		t.Errorf("[3] = %s", resp)
	}
	if n := len(st.Records()); n != 2 {
		t.Errorf("%d records, want 2 (the request and the notification)", n)
	}
	if resp := h.Handle(context.Background(), []byte(`[{"jsonrpc":"2.0",`+mem+`},{"jsonrpc":"2.0","method":"ping"}]`)); resp != nil {
		t.Errorf("all-notification batch answered %s", resp)
	}
}

func TestHTTP(t *testing.T) {
	st := storetest.NewMem()
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow), Views: catalog.Views, Store: st})
	h := NewHandler(d, Options{MaxBody: 1024, Logf: t.Logf})
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/aos", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	mem := `"method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":["x"]}`

	t.Run("request", func(t *testing.T) {
		resp, body := post(`{"jsonrpc":"2.0","id":1,` + mem + `}`)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, `"decision":"allow","message":"allowed: no policy matched; default decision allow"`) {
			t.Errorf("body %s", body)
		}
	})
	t.Run("notification", func(t *testing.T) {
		n := len(st.Records())
		resp, body := post(`{"jsonrpc":"2.0",` + mem + `}`)
		if resp.StatusCode != http.StatusNoContent || body != "" {
			t.Errorf("status %d body %q, want 204 and no body", resp.StatusCode, body)
		}
		if len(st.Records()) != n+1 {
			t.Error("notification not recorded")
		}
	})
	t.Run("error is HTTP 200", func(t *testing.T) {
		resp, body := post(`{`)
		if resp.StatusCode != 200 || !strings.Contains(body, `"code":-32700`) {
			t.Errorf("status %d body %s", resp.StatusCode, body)
		}
	})
	t.Run("body over the limit", func(t *testing.T) {
		resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"metadata":"` + strings.Repeat("x", 2000) + `"}}`)
		if resp.StatusCode != 200 || !strings.Contains(body, `"code":-32600,"message":"invalid request: body exceeds the limit of 1024 bytes"`) || !strings.Contains(body, `"id":null`) {
			t.Errorf("status %d body %s", resp.StatusCode, body)
		}
	})
	t.Run("GET is 405", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/aos")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("status %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
	t.Run("ping", func(t *testing.T) {
		_, body := post(`{"jsonrpc":"2.0","id":"p","method":"ping","params":{"timestamp":"2026-01-01T00:00:00Z"}}`)
		var r struct {
			Result struct{ Status, Version, Timestamp string }
		}
		json.Unmarshal([]byte(body), &r)
		if r.Result.Status != "connected" || r.Result.Version != "dev" || !strings.HasSuffix(r.Result.Timestamp, "Z") {
			t.Errorf("ping = %s", body)
		}
	})
}

// TestTraceUnavailable: a decision that cannot be recorded is answered as
// the deny Decide returns, never as the allow the chain made.
func TestTraceUnavailable(t *testing.T) {
	h, st := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	st.Err = errors.New("disk full")
	resp := h.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"steps/memoryStore","params":{`+ctxJSON+`,"memory":[]}}`))
	var r struct{ Result map[string]any }
	json.Unmarshal(resp, &r)
	if r.Result["decision"] != "deny" || !jsonEqual(r.Result["reasonCode"], []string{warden.CodeTraceUnavailable}) {
		t.Errorf("response %s", resp)
	}
}

// TestPanicRecovered: a guardian panic is the chain's business; an endpoint
// panic (here a Normalize hook forced to panic) answers -32603.
func TestPanicRecovered(t *testing.T) {
	h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	h.d = nil // Decide on a nil Decider panics
	resp := h.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"steps/memoryStore","params":{`+ctxJSON+`,"memory":[]}}`))
	if string(resp) != `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"internal error"}}` {
		t.Errorf("response %s", resp)
	}
}

func TestLimitMessage(t *testing.T) {
	if got := mib(jsonrpc.DefaultMaxBody); got != " (4 MiB)" {
		t.Errorf("mib(jsonrpc.DefaultMaxBody) = %q", got)
	}
	if got := mib(1000); got != "" {
		t.Errorf("mib(1000) = %q", got)
	}
}
