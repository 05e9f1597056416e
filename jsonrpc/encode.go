package jsonrpc

import (
	"encoding/json"
	"strconv"

	"github.com/wardenhq/warden/internal/jsonappend"
)

var null = []byte("null")

// AppendHead appends the start of a response to id (its raw text as sent;
// nil: null), members in the specification's order:
// {"jsonrpc":"2.0","id":ID, — the caller appends "result":… or "error":…
// and the closing brace.
func AppendHead(b, id []byte) []byte {
	if id == nil {
		id = null
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, ',')
}

// AppendError appends the error response e to id (nil: null):
// {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M,"data":D}},
// data left out when empty or when it does not encode.
func AppendError(b, id []byte, e *Error) []byte {
	b = AppendHead(b, id)
	b = append(b, `"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b = jsonappend.String(b, e.Message)
	if len(e.Data) > 0 {
		mark := len(b)
		b = append(b, `,"data":`...)
		var err error
		if b, err = jsonappend.Value(b, e.Data); err != nil {
			b = b[:mark]
		}
	}
	return append(b, "}}"...)
}

// AppendRequest appends a request to id (nil: null) with the method and
// the raw params (nil: none), members in the specification's order.
func AppendRequest(b, id []byte, method string, params []byte) []byte {
	if id == nil {
		id = null
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = jsonappend.String(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// ErrorResponse encodes a JSON-RPC error response for id (nil or empty:
// null) as encoding/json encodes it from a map (members sorted); data is
// left out when nil.
func ErrorResponse(id json.RawMessage, code int, msg string, data any) []byte {
	if len(id) == 0 {
		id = json.RawMessage(null)
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": Version, "id": id, "error": e})
	if err != nil { // an id that is not JSON, or data that does not encode
		b, _ = json.Marshal(map[string]any{"jsonrpc": Version, "id": nil, "error": map[string]any{"code": code, "message": msg}})
	}
	return b
}

// ResultObject is the result response to id (nil: null) as a decoded JSON
// object: the form a response is signed in before it is encoded (ACS
// signs the whole message).
func ResultObject(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": Version, "id": idValue(id), "result": result}
}

// ErrorObject is the error response e to id (nil: null) as a decoded JSON
// object, the error itself an object a signature can be added to.
func ErrorObject(id json.RawMessage, e *Error) map[string]any {
	eo := map[string]any{"code": e.Code, "message": e.Message}
	if e.Data != nil {
		eo["data"] = e.Data
	}
	return map[string]any{"jsonrpc": Version, "id": idValue(id), "error": eo}
}

// idValue is id as a member value: nil (null) when absent.
func idValue(id json.RawMessage) any {
	if id == nil {
		return nil
	}
	return id
}
