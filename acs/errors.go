package acs

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/jsonrpc"
)

// The JSON-RPC and ACS error codes (ACS specification §17, §17.1).
const (
	CodeParseError     = jsonrpc.CodeParseError     // -32700: not JSON
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: not a JSON-RPC request (or over a limit, or ambiguous)
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound // -32601: no such ACS method
	CodeInvalidParams  = jsonrpc.CodeInvalidParams  // -32602: params (envelope or payload) do not fit the method
	CodeInternal       = jsonrpc.CodeInternal       // -32603: warden failed

	CodeSessionRefused          = -32000 // SESSION_REFUSED
	CodeUnsupportedVersion      = -32001 // UNSUPPORTED_VERSION
	CodeProvenanceRequired      = -32002 // PROVENANCE_REQUIRED
	CodeCapabilityNotNegotiated = -32003 // CAPABILITY_NOT_NEGOTIATED
	CodeSignatureInvalid        = -32004 // SIGNATURE_INVALID
	CodeReplayDetected          = -32005 // REPLAY_DETECTED
	CodeTimestampOutOfWindow    = -32006 // TIMESTAMP_OUT_OF_WINDOW
	CodeChainMismatch           = -32007 // CHAIN_MISMATCH
)

// Reason codes warden puts in an answer's reason_codes (ACS §17.2 names
// the first three).
const (
	ReasonModifyUnsupported   = "modify_unsupported"
	ReasonApproverUnavailable = "approver_unavailable"
	ReasonChainMismatch       = "chain_mismatch"
	// ReasonDeferLimit: the session has had acs.defer.max_per_session
	// deferrals; a further one is a deny (ACS §6: cascading deferrals are
	// bounded per session).
	ReasonDeferLimit = "defer_limit"
	// ReasonNotDecisionEligible: the hook cannot be refused (postCompact,
	// and the audit-only hooks); the policies' verdict is recorded and the
	// answer is allow.
	ReasonNotDecisionEligible = "not_decision_eligible"
)

// errorNames are the data.reason of each ACS error: JSON-RPC's own codes
// by their names in jsonrpc's table, in lower case, and ACS's codes.
var errorNames = map[int]string{
	CodeParseError:     strings.ToLower(jsonrpc.CodeName(CodeParseError)),
	CodeInvalidRequest: strings.ToLower(jsonrpc.CodeName(CodeInvalidRequest)),
	CodeMethodNotFound: strings.ToLower(jsonrpc.CodeName(CodeMethodNotFound)),
	CodeInvalidParams:  strings.ToLower(jsonrpc.CodeName(CodeInvalidParams)),
	CodeInternal:       strings.ToLower(jsonrpc.CodeName(CodeInternal)),
	CodeSessionRefused: "session_refused", CodeUnsupportedVersion: "unsupported_version",
	CodeProvenanceRequired: "provenance_required", CodeCapabilityNotNegotiated: "capability_not_negotiated",
	CodeSignatureInvalid: "signature_invalid", CodeReplayDetected: "replay_detected",
	CodeTimestampOutOfWindow: "timestamp_out_of_window", CodeChainMismatch: "chain_mismatch",
}

// Error is a JSON-RPC error answer. Data always carries reason (the code's
// name) and message (ACS §17.1), plus the code's own fields (field,
// method, skew_window_ms, supported_versions, ...).
type Error struct {
	Code    int
	Message string
	Data    map[string]any
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// errf builds an Error; field, when not "", names the offending member
// (params.metadata.session_id) in data.field.
func errf(code int, field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	e := &Error{Code: code, Message: msg, Data: map[string]any{"reason": errorNames[code], "message": msg}}
	if field != "" {
		e.Data["field"] = field
	}
	return e
}

// with adds a data member.
func (e *Error) with(k string, v any) *Error {
	e.Data[k] = v
	return e
}

// wire is the error object as it is sent.
func (e *Error) wire() *jsonrpc.Error {
	return &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
}
