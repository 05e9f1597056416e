// Package jsonrpc frames JSON-RPC 2.0 for every surface of warden: the
// envelope read from a message (ids kept as sent, byte for byte), the
// error codes and their names (one table), error and result responses,
// batches and their limit, the HTTP answer, the "is this a JSON-RPC
// message" check and a bounded request/response correlation cache. The
// AOS and ACS endpoints, the MCP gateways, the A2A proxy and the AOS
// client use it, so the same input is classified and answered alike
// everywhere.
//
// Two byte forms of a response are on the wire, and kept as they are:
// AOS answers are appended member by member in the specification's order
// (AppendHead, AppendError: the measured-fast path), while the gateways'
// and ACS's answers are encoded as encoding/json encodes a map, members
// sorted (ErrorResponse, and the objects of ResultObject and ErrorObject,
// which ACS signs before they are encoded).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// JSON-RPC 2.0 error codes, used in their JSON-RPC meaning.
const (
	CodeParseError     = -32700 // the text is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a valid request (or over a limit, or ambiguous)
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the params do not fit the method
	CodeInternal       = -32603 // the server failed
)

// warden's own refusals: the one list of them (docs/gateways.md holds the
// table, with the codes avoided and why). They sit in JSON-RPC's
// application range, outside -32768..-32000: the -32000..-32099 band is
// claimed by every protocol warden wraps (MCP reserves -32020..-32099 and
// its SDKs use -32000..-32019, -32001 being their request timeout; A2A
// defines -32001..-32009, -32001 being TaskNotFound; ACS reserves the whole
// band; AOS puts its own errors there), and SDKs already use -31001 (the MCP
// Go SDK) and -31401/-31403 (a2a-go). A client that sees one of these codes
// knows warden answered, not the server or agent behind it.
const (
	// CodeDenied: a policy or hook denied the message, or its approval was
	// denied or not granted in time; error.data carries the reason and the
	// trace record id (DenyData).
	CodeDenied = -31900
	// CodeUpstream: the upstream the request is for is not configured,
	// unreachable, timed out, crashed, or answered something that is not a
	// JSON-RPC answer within the limits.
	CodeUpstream = -31901
	// CodeUnauthenticated: no valid credential (HTTP 401).
	CodeUnauthenticated = -31902
	// CodeForbidden: a credential without the scope, or a browser origin or
	// host that is not allowed (HTTP 403).
	CodeForbidden = -31903
)

// Names of warden's own codes, as error.data.name (and A2A 1.0's
// ErrorInfo.reason) carries them.
const (
	NameDenied          = "DENIED_BY_WARDEN"
	NameUpstream        = "UPSTREAM_UNAVAILABLE"
	NameUnauthenticated = "UNAUTHENTICATED"
	NameForbidden       = "FORBIDDEN"
)

// DenyData is the error.data of a deny: name, reason (as the error message
// has it, without the "denied by warden: " prefix), recordId (the trace
// record of the decision), policyId and reasonCode (the deciding policies'
// reason codes, comma separated: approval_denied, approval_timeout,
// approval_required say an approval refused it). Empty members are left
// out. Every member is a string, so the map is also A2A 1.0's
// ErrorInfo.metadata.
func DenyData(reason, recordID, policyID string, reasonCodes []string) map[string]string {
	d := map[string]string{"name": NameDenied, "reason": reason}
	if recordID != "" {
		d["recordId"] = recordID
	}
	if policyID != "" {
		d["policyId"] = policyID
	}
	if len(reasonCodes) > 0 {
		d["reasonCode"] = strings.Join(reasonCodes, ",")
	}
	return d
}

// RequestID returns the id of the JSON-RPC request in body when it is one
// object with a valid id (a string, a number or null), else null: the id
// to answer a refusal with. It reads at most what it is given.
func RequestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return json.RawMessage("null")
	}
	d := json.NewDecoder(bytes.NewReader(m.ID))
	d.UseNumber()
	var id any
	if d.Decode(&id) != nil || !ValidID(id) {
		return json.RawMessage("null")
	}
	return m.ID
}

// Kind is what a decoded JSON object is as a JSON-RPC 2.0 message.
type Kind uint8

// Kinds of messages.
const (
	KindInvalid      Kind = iota // not a JSON-RPC message
	KindRequest                  // a method and an id (null included)
	KindNotification             // a method and no id member
	KindResponse                 // a result or an error, for an id
)

// Classify says what m is. A member "method" that is not a string, or an id
// that is not a string, a number or null, makes m Invalid; so does a
// message with neither a method nor a result or error.
func Classify(m map[string]any) Kind {
	if id, ok := m["id"]; ok && !ValidID(id) {
		return KindInvalid
	}
	if method, ok := m["method"]; ok {
		if _, isStr := method.(string); !isStr {
			return KindInvalid
		}
		if _, ok := m["id"]; ok { // a null id is still a request (JSON-RPC 2.0 §4)
			return KindRequest
		}
		return KindNotification
	}
	_, r := m["result"]
	_, e := m["error"]
	if r || e {
		return KindResponse
	}
	return KindInvalid
}

// LooksLikeMessage reports whether m has any member only a JSON-RPC
// message has (jsonrpc, method, result, error): a wrapped protocol message
// rather than AOS params wrapping one.
func LooksLikeMessage(m map[string]any) bool {
	for _, k := range [...]string{"jsonrpc", "method", "result", "error"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// ValidID reports whether a decoded id is a string, a number or null.
func ValidID(id any) bool {
	switch id.(type) {
	case string, float64, json.Number, nil:
		return true
	}
	return false
}

// IDKey is the correlation key of a decoded id: "s"+text for a string,
// "n"+number for a number; ok is false for null or anything else.
func IDKey(id any) (key string, ok bool) {
	switch t := id.(type) {
	case string:
		return "s" + t, true
	case float64:
		return "n" + strconv.FormatFloat(t, 'g', -1, 64), true
	case json.Number:
		return "n" + t.String(), true
	}
	return "", false
}

// IDText is an id as text for the trace: a string as it is, a number as
// written, "" for null or none.
func IDText(id any) string {
	switch t := id.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case json.Number:
		return t.String()
	}
	return ""
}

// RawIDText is a raw id (its JSON text as sent) as text for the trace: a
// string unquoted, a number as written, "" for null or none.
func RawIDText(id []byte) string {
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}
