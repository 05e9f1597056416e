package jsonrpc

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadEnvelope(t *testing.T) {
	for _, tt := range []struct {
		in                              string
		object                          bool
		version, id, method, params, rs string
	}{
		{`{"jsonrpc":"2.0","id":1.50,"method":"m","params":{"a":[1]}}`, true, `"2.0"`, `1.50`, `"m"`, `{"a":[1]}`, ""},
		{` { "id" : "\u0041" , "result" : null } `, true, "", `"\u0041"`, "", "", "null"},
		{`{"ID":1,"Method":"m"}`, true, "", "", "", "", ""}, // keys match exactly
		{`{"\u0069d":7}`, true, "", "7", "", "", ""},        // as encoding/json decodes the key
		{`[{"id":1}]`, false, "", "", "", "", ""},
		{`null`, false, "", "", "", "", ""},
	} {
		env, object := ReadEnvelope([]byte(tt.in))
		got := []string{string(env.JSONRPC), string(env.ID), string(env.Method), string(env.Params), string(env.Result)}
		want := []string{tt.version, tt.id, tt.method, tt.params, tt.rs}
		if object != tt.object || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("ReadEnvelope(%s) = %q %v, want %q %v", tt.in, got, object, want, tt.object)
		}
	}
}

func TestVersionAndIDKinds(t *testing.T) {
	for _, tt := range []struct {
		v  string
		ok bool
	}{{`"2.0"`, true}, {`"2\u002e0"`, true}, {`2.0`, false}, {`"2.1"`, false}, {``, false}, {`null`, false}} {
		env := Envelope{JSONRPC: []byte(tt.v)}
		if tt.v == "" {
			env.JSONRPC = nil
		}
		if env.VersionOK() != tt.ok {
			t.Errorf("VersionOK(%s) = %v", tt.v, !tt.ok)
		}
	}
	for raw, want := range map[string]IDKind{`"a"`: StringID, `-1`: NumberID, `12e3`: NumberID, `null`: NullID, `true`: BadID, `{}`: BadID, `[]`: BadID} {
		if got := KindOfID([]byte(raw)); got != want {
			t.Errorf("KindOfID(%s) = %v, want %v", raw, got, want)
		}
	}
	if KindOfID(nil) != NoID {
		t.Error("KindOfID(nil) is not NoID")
	}
	for raw, want := range map[string]string{`"a\"b"`: `a"b`, `1.0`: `1.0`, `null`: ``, ``: ``} {
		if got := RawIDText([]byte(raw)); got != want {
			t.Errorf("RawIDText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestEncodings pins the bytes of each response form: the appended one
// (AOS, members in the specification's order, the id as sent) and the
// encoding/json one (members sorted, as the other surfaces have always
// answered).
func TestEncodings(t *testing.T) {
	e := &Error{Code: CodeInvalidParams, Message: "invalid params: <x>", Data: map[string]any{"field": "x", "limit": 4}}
	for _, tt := range []struct {
		name string
		got  []byte
		want string
	}{
		{"AppendError", AppendError(nil, []byte(`1.50`), e),
			`{"jsonrpc":"2.0","id":1.50,"error":{"code":-32602,"message":"invalid params: \u003cx\u003e","data":{"field":"x","limit":4}}}`},
		{"AppendError without id or data", AppendError([]byte("x"), nil, &Error{Code: CodeInternal, Message: "internal error"}),
			`x{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`},
		{"AppendError with data that does not encode", AppendError(nil, []byte(`"a"`), &Error{Code: 1, Message: "m", Data: map[string]any{"f": func() {}}}),
			`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}`},
		{"AppendRequest", AppendRequest(nil, []byte(`"r1"`), "tools/call", []byte(`{"a":1}`)),
			`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"a":1}}`},
		{"AppendRequest without id or params", AppendRequest(nil, nil, "ping", nil),
			`{"jsonrpc":"2.0","id":null,"method":"ping"}`},
		{"ErrorResponse", ErrorResponse(json.RawMessage(`"<1>"`), CodeDenied, "denied", map[string]string{"reason": "r", "name": NameDenied}),
			`{"error":{"code":-31900,"data":{"name":"DENIED_BY_WARDEN","reason":"r"},"message":"denied"},"id":"\u003c1\u003e","jsonrpc":"2.0"}`},
		{"ErrorResponse without id or data", ErrorResponse(nil, CodeParseError, "parse error", nil),
			`{"error":{"code":-32700,"message":"parse error"},"id":null,"jsonrpc":"2.0"}`},
		{"ErrorResponse with an id that is not JSON", ErrorResponse(json.RawMessage(`{`), CodeInternal, "m", "d"),
			`{"error":{"code":-32603,"message":"m"},"id":null,"jsonrpc":"2.0"}`},
		{"ErrorObject", must(json.Marshal(ErrorObject(json.RawMessage(`7`), e))),
			`{"error":{"code":-32602,"data":{"field":"x","limit":4},"message":"invalid params: \u003cx\u003e"},"id":7,"jsonrpc":"2.0"}`},
		{"ResultObject", must(json.Marshal(ResultObject(nil, map[string]any{"ok": true}))),
			`{"id":null,"jsonrpc":"2.0","result":{"ok":true}}`},
	} {
		if string(tt.got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, tt.got, tt.want)
		}
	}
	if ErrorObject(nil, e)["id"] != nil {
		t.Error("ErrorObject: a nil id is not null")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		in    string
		n     int
		batch bool
		err   string
	}{
		{`{"a":1}`, 1, false, ""},
		{`not json`, 1, false, ""}, // one message, left to the caller to read
		{` [{"a":1}, 2]`, 2, true, ""},
		{`[]`, 0, true, ""},
		{`[1,2,3]`, 0, true, "limit of 2"},
		{`[1,`, 0, true, "unexpected end"},
	} {
		msgs, batch, err := Split([]byte(tt.in), 2)
		if len(msgs) != tt.n || batch != tt.batch || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Split(%s) = %d %v %v", tt.in, len(msgs), batch, err)
		}
	}
	_, _, err := Split([]byte(`[1,2,3]`), 2)
	var over *BatchLimitError
	if !errors.As(err, &over) || over.Limit != 2 {
		t.Errorf("over the limit: %v", err)
	}
}

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "99")
	WriteJSON(rec, 404, []byte(`{"a":1}`))
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Content-Length") != "7" || rec.Body.String() != `{"a":1}` {
		t.Errorf("WriteJSON: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	WriteValue(rec, 409, map[string]any{"error": "<already>"})
	if rec.Code != 409 || rec.Body.String() != "{\"error\":\"<already>\"}\n" || rec.Header().Get("Content-Length") != "22" {
		t.Errorf("WriteValue: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}

func TestCodeNames(t *testing.T) {
	for code, want := range map[int]string{CodeParseError: "PARSE_ERROR", CodeInternal: "INTERNAL_ERROR", CodeDenied: NameDenied, CodeForbidden: NameForbidden, -32001: ""} {
		if got := CodeName(code); got != want {
			t.Errorf("CodeName(%d) = %q, want %q", code, got, want)
		}
	}
}
