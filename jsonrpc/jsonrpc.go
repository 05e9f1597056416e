// Package jsonrpc holds what every JSON-RPC 2.0 surface of warden shares:
// the error codes, id handling, the "is this a JSON-RPC message" check and a
// bounded request/response correlation cache. The AOS endpoint, the MCP
// gateways, the A2A proxy and the AOS client use it, so the same input is
// classified and answered alike everywhere.
package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// JSON-RPC 2.0 error codes, and the server-error codes warden answers with.
const (
	CodeParseError     = -32700 // the text is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a valid request (or over a limit, or ambiguous)
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the params do not fit the method
	CodeInternal       = -32603 // the server failed
	CodeDenied         = -32001 // a policy or hook denied the message (CONTRACT §6)
	CodeUpstream       = -32002 // the upstream is unreachable, timed out, crashed or answered garbage
)

// Kind is what a decoded JSON object is as a JSON-RPC 2.0 message.
type Kind uint8

// Kinds of messages.
const (
	Invalid      Kind = iota // not a JSON-RPC message
	Request                  // a method and an id (null included)
	Notification             // a method and no id member
	Response                 // a result or an error, for an id
)

// Classify says what m is. A member "method" that is not a string, or an id
// that is not a string, a number or null, makes m Invalid; so does a
// message with neither a method nor a result or error.
func Classify(m map[string]any) Kind {
	if id, ok := m["id"]; ok && !ValidID(id) {
		return Invalid
	}
	if method, ok := m["method"]; ok {
		if _, isStr := method.(string); !isStr {
			return Invalid
		}
		if _, ok := m["id"]; ok { // a null id is still a request (JSON-RPC 2.0 §4)
			return Request
		}
		return Notification
	}
	_, r := m["result"]
	_, e := m["error"]
	if r || e {
		return Response
	}
	return Invalid
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
