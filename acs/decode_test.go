package acs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/jsonstrict"
)

// decodeMessageRef is decodeMessage as it was before it found the members
// with jsonstrict.Members: through encoding/json's map of raw members.
// TestDecodeMessageAgrees holds the two to the same answers.
func decodeMessageRef(raw []byte) (*request, *Error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, errf(CodeInvalidRequest, "", "a request must be a JSON object")
	}
	r := &request{}
	if id, ok := top["id"]; ok {
		switch firstByte(id) {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			r.idRaw = id
		default:
			return nil, errf(CodeInvalidRequest, "id", "must be a string or a number")
		}
	}
	var v string
	if err := json.Unmarshal(top["jsonrpc"], &v); err != nil || v != "2.0" {
		return r, errf(CodeInvalidRequest, "jsonrpc", `must be "2.0"`)
	}
	if r.idRaw == nil {
		return r, errf(CodeInvalidRequest, "id", "required: ACS v0.1.0 has no notifications")
	}
	if m, ok := top["method"]; !ok || json.Unmarshal(m, &r.method) != nil || r.method == "" {
		return r, errf(CodeInvalidRequest, "method", "required, a non-empty string")
	}
	if firstByte(top["params"]) != '{' {
		return r, errf(CodeInvalidParams, "params", "required, an object (the ACS envelope)")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&r.msg); err != nil {
		return r, errf(CodeInvalidRequest, "", "%v", err)
	}
	r.params, _ = r.msg["params"].(map[string]any)
	var p struct {
		Payload json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(top["params"], &p)
	r.payloadRaw = p.Payload
	return r, nil
}

// TestDecodeMessageAgrees: on messages that vary each member the JSON-RPC
// layer reads (present, absent, of each JSON type, escaped keys, spacing),
// decodeMessage gives the reference's request and error.
func TestDecodeMessageAgrees(t *testing.T) {
	ids := []string{``, `"id":"a-1",`, `"id":7,`, `"id":-1.5e2,`, `"id":null,`, `"id":{"x":1},`, `"id":[1],`, `"id":true,`, `"\u0069d":"esc",`, ` "id" : "sp" ,`}
	versions := []string{``, `"jsonrpc":"2.0",`, `"jsonrpc":"1.0",`, `"jsonrpc":2,`, `"jsonrpc":null,`, `"json\u0072pc":"2.0",`}
	methods := []string{``, `"method":"steps/toolCallRequest",`, `"method":"",`, `"method":5,`, `"method":["x"],`, `"method":"a\"}b",`}
	params := []string{``, `"params":null`, `"params":[1]`, `"params":{}`, `"params":{"request_id":"r","payload":{"tool":{"name":"ls"},"n":[1,{"k":"}"}]}}`,
		`"params":{"\u0070ayload":{"a":1},"z":2}`, `"params":{"payload":null}`, `"params":{"payload":"s","x":{"payload":1}}`, `"params" : { "payload" : [ 1 , 2 ] }`}
	var bodies []string
	for _, id := range ids {
		for _, v := range versions {
			for _, m := range methods {
				for _, p := range params {
					body := "{" + id + v + m + p
					body = strings.TrimSuffix(body, ",") + "}"
					bodies = append(bodies, body)
				}
			}
		}
	}
	bodies = append(bodies, `null`, `[]`, `"s"`, `5`, ` {"jsonrpc":"2.0","id":1,"method":"m","params":{"payload":{}}} `)
	checked := 0
	for _, body := range bodies {
		raw := []byte(body)
		if jsonstrict.Check(raw) != nil {
			continue // the handler refuses it before decoding
		}
		checked++
		got, gerr := decodeMessage(raw)
		want, werr := decodeMessageRef(raw)
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("%s:\n error %v\n want  %v", body, gerr, werr)
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("%s: request %v, want %v", body, got, want)
		}
		if got == nil {
			continue
		}
		if !bytes.Equal(got.idRaw, want.idRaw) || got.method != want.method || !bytes.Equal(got.payloadRaw, want.payloadRaw) ||
			!reflect.DeepEqual(got.msg, want.msg) || !reflect.DeepEqual(got.params, want.params) {
			t.Fatalf("%s:\n got  id %s method %q payload %s\n want id %s method %q payload %s",
				body, got.idRaw, got.method, got.payloadRaw, want.idRaw, want.method, want.payloadRaw)
		}
	}
	if checked < 3000 {
		t.Fatalf("only %d bodies checked", checked)
	}
}
