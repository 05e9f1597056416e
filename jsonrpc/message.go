package jsonrpc

import (
	"encoding/json"

	"github.com/wardenhq/warden/jsonstrict"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// Error is a JSON-RPC error object. Data, when not empty, is the data
// member: an object, as every error warden builds has (an answer whose
// data is another value, such as A2A 1.0's list of ErrorInfo details, is
// encoded by ErrorResponse).
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// codeNames is the name of each code warden answers with, in the form
// A2A 1.0's ErrorInfo.reason and warden's error.data.name use (ACS's
// data.reason is the same name in lower case).
var codeNames = map[int]string{
	CodeParseError:      "PARSE_ERROR",
	CodeInvalidRequest:  "INVALID_REQUEST",
	CodeMethodNotFound:  "METHOD_NOT_FOUND",
	CodeInvalidParams:   "INVALID_PARAMS",
	CodeInternal:        "INTERNAL_ERROR",
	CodeDenied:          NameDenied,
	CodeUpstream:        NameUpstream,
	CodeUnauthenticated: NameUnauthenticated,
	CodeForbidden:       NameForbidden,
}

// CodeName is the name of a code of the table above ("" for any other:
// a protocol's own codes are named by that protocol's package).
func CodeName(code int) string { return codeNames[code] }

// Request is a JSON-RPC request (or, with a nil ID, a notification) as a
// client sends it: the members in the specification's order.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// Response is a JSON-RPC response with its result or error as values, for
// a program that encodes its answer with encoding/json: the members in the
// specification's order.
type Response struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Result  any    `json:"result,omitempty"`
	Error   *Error `json:"error,omitempty"`
}

// Envelope is the members of one JSON-RPC message the framing reads, each
// the raw JSON text of its value as sent (nil when the member is absent),
// so an id is echoed byte for byte and params or a result are decoded only
// by who needs them. A server reads it with ReadEnvelope; a client may
// decode an answer into it with encoding/json.
type Envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ReadEnvelope finds the envelope members of msg in one pass over its
// bytes, without decoding or copying values (they share msg's memory).
// Keys match exactly, as JSON-RPC names them; msg is JSON text already
// checked (jsonstrict.Check), so a member appears once. object is false
// when msg is not a JSON object.
func ReadEnvelope(msg []byte) (env Envelope, object bool) {
	if firstByte(msg) != '{' {
		return Envelope{}, false
	}
	jsonstrict.Members(msg, func(k string, v []byte) bool {
		switch k {
		case "jsonrpc":
			env.JSONRPC = v
		case "id":
			env.ID = v
		case "method":
			env.Method = v
		case "params":
			env.Params = v
		case "result":
			env.Result = v
		case "error":
			env.Error = v
		}
		return true
	})
	return env, true
}

// VersionOK reports whether the jsonrpc member is the string "2.0".
func (env *Envelope) VersionOK() bool {
	if string(env.JSONRPC) == `"2.0"` {
		return true
	}
	var v string
	return firstByte(env.JSONRPC) == '"' && json.Unmarshal(env.JSONRPC, &v) == nil && v == Version
}

// IDKind is what the id member of a message holds.
type IDKind uint8

// Kinds of ids.
const (
	NoID     IDKind = iota // no id member
	NullID                 // null
	StringID               // a string
	NumberID               // a number
	BadID                  // anything else: not a valid JSON-RPC id
)

// KindOfID says what the raw id (nil: absent) is.
func KindOfID(raw []byte) IDKind {
	if raw == nil {
		return NoID
	}
	switch firstByte(raw) {
	case '"':
		return StringID
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return NumberID
	case 'n':
		return NullID
	}
	return BadID
}

// firstByte is the first byte of b past JSON whitespace, 0 when none.
func firstByte(b []byte) byte {
	for _, c := range b {
		if !isSpace(c) {
			return c
		}
	}
	return 0
}
