package aos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAttackAOSInvalidUTF8: /aos refuses a body with invalid UTF-8 or a
// lone UTF-16 surrogate escape anywhere — in the method, in a string of
// params, in a key — as MCP, A2A, ACS and dispatch do (jsonstrict), with an
// invalid-request error naming the string. encoding/json, and this parser
// before, read them as U+FFFD: the policies would decide on text that is
// not what the caller sent (a tool receiving the raw bytes reads
// something else), so nothing is decided or recorded.
func TestAttackAOSInvalidUTF8(t *testing.T) {
	call := func(method, toolID, inputKey, value string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{"toolCallRequest":{"executionId":"e1","toolId":"` + toolID +
			`","inputs":[{"name":"to","` + inputKey + `":"` + value + `"}]},` + ctxJSON + `}}`
	}
	const tcr = MethodToolCallRequest
	// msg has %d for the offset of bad, the first offending text in the
	// body.
	cases := []struct {
		name, body, bad, msg string
	}{
		{"invalid byte in a value", call(tcr, "send_email", "value", "evil\xff@example.com"), "\xff",
			"a string with invalid UTF-8 (byte 0xff at offset %d) in params.toolCallRequest.inputs[0].value"},
		{"a UTF-8-encoded surrogate in a value", call(tcr, "send_email", "value", "\xed\xa0\x80"), "\xed",
			"a string with invalid UTF-8 (byte 0xed at offset %d) in params.toolCallRequest.inputs[0].value"},
		{"overlong encoding in the tool id", call(tcr, "send\xc0\xafemail", "value", "x"), "\xc0",
			"a string with invalid UTF-8 (byte 0xc0 at offset %d) in params.toolCallRequest.toolId"},
		{"invalid byte in the method", call("steps/toolCall\xffRequest", "t", "value", "x"), "\xff",
			"a string with invalid UTF-8 (byte 0xff at offset %d) in method"},
		{"invalid byte in a key", call(tcr, "t", "val\x80ue", "x"), "\x80",
			"a key with invalid UTF-8 (byte 0x80 at offset %d) in params.toolCallRequest.inputs[0]"},
		{"lone high surrogate in a value", call(tcr, "send_email", "value", `evil\ud800@example.com`), `\ud800`,
			`a string with a lone surrogate escape \ud800 (offset %d) in params.toolCallRequest.inputs[0].value`},
		{"lone low surrogate in a value", call(tcr, "send_email", "value", `\udc00`), `\udc00`,
			`a string with a lone surrogate escape \udc00 (offset %d) in params.toolCallRequest.inputs[0].value`},
		{"high surrogate before a non-surrogate", call(tcr, "send_email", "value", `\ud83d\u0041`), `\ud83d`,
			`a string with a lone surrogate escape \ud83d (offset %d) in params.toolCallRequest.inputs[0].value`},
		{"lone surrogate in the method", call(`steps/toolCallRequest\ud800`, "t", "value", "x"), `\ud800`,
			`a string with a lone surrogate escape \ud800 (offset %d) in method`},
		{"lone surrogate in a key", call(tcr, "t", `value\udfff`, "x"), `\udfff`,
			`a key with a lone surrogate escape \udfff (offset %d) in params.toolCallRequest.inputs[0]`},
		{"lone surrogate in the session id", strings.Replace(call(tcr, "t", "value", "x"), `"id":"s1"`, `"id":"s\ud800"`, 1), `\ud800`,
			`a string with a lone surrogate escape \ud800 (offset %d) in params.context.session.id`},
		{"in one entry of a batch", "[" + call(tcr, "t", "value", "ok") + "," + call(tcr, "t", "value", "\xff") + "]", "\xff",
			"a string with invalid UTF-8 (byte 0xff at offset %d) in params.toolCallRequest.inputs[0].value"},
		{"in an envelope key", "{\"jsonrpc\":\"2.0\",\"id\":1,\"meth\xffod\":\"ping\"}", "\xff",
			"a key with invalid UTF-8 (byte 0xff at offset %d) at the top level"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			h, st := newTestHandler(rec)
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/aos", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(w, r)
			var got struct {
				ID    json.RawMessage `json:"id"`
				Error *Error          `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Error == nil {
				t.Fatalf("%d %s: want one JSON-RPC error (%v)", w.Code, w.Body, err)
			}
			if want := "invalid request: " + fmt.Sprintf(tc.msg, strings.Index(tc.body, tc.bad)); got.Error.Code != CodeInvalidRequest || got.Error.Message != want {
				t.Errorf("error %d %q,\nwant  %d %q", got.Error.Code, got.Error.Message, CodeInvalidRequest, want)
			}
			if string(got.ID) != "null" {
				t.Errorf("id %s, want null (the body is refused whole)", got.ID)
			}
			if strings.Contains(w.Body.String(), "\ufffd") {
				t.Errorf("the answer carries U+FFFD: %s", w.Body)
			}
			if ev := rec.last(); ev != nil {
				t.Errorf("decided on %s %v", ev.Name, ev.Payload)
			}
			if n := len(st.Records()); n != 0 {
				t.Errorf("%d records for a refused body", n)
			}
		})
	}
	// What is valid still passes: a surrogate pair, non-ASCII text, an
	// escaped U+FFFD the caller meant.
	for _, v := range []string{`\ud83d\ude00`, "caf\u00e9 \u65e5\u672c", `\ufffd`, "\xef\xbf\xbd"} {
		rec := &recorder{}
		h, st := newTestHandler(rec)
		resp := h.Handle(context.Background(), []byte(call(tcr, "t", "value", v)))
		if !strings.Contains(string(resp), `"result"`) || rec.last() == nil || len(st.Records()) != 1 {
			t.Errorf("%q: %s (decided %v, %d records)", v, resp, rec.last() != nil, len(st.Records()))
		}
	}
}
