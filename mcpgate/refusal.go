package mcpgate

import (
	"encoding/json"
	"net/http"

	"github.com/wardenhq/warden/jsonrpc"
)

// denial is the JSON-RPC error answering a message v denies, for id: code
// CodeDenied, the message "denied by warden: REASON", and error.data with
// the reason and the trace record id (jsonrpc.DenyData), so a client tells
// warden's deny from the server's own errors and can look the decision up.
func (v verdict) denial(id json.RawMessage) []byte {
	reason := v.reason
	if reason == "" {
		reason = "policy"
	}
	return jsonrpc.ErrorResponse(id, CodeDenied, deniedMessage(reason), jsonrpc.DenyData(reason, v.recordID, v.policyID, v.codes))
}

// upstreamData is the error.data of a CodeUpstream error for server.
func upstreamData(server string) map[string]string {
	return map[string]string{"name": jsonrpc.NameUpstream, "upstream": server}
}

// upstreamFailed is the CodeUpstream error answering id: the server is not
// configured, unreachable, timed out, crashed or answered garbage.
func upstreamFailed(id json.RawMessage, server, msg string) []byte {
	return jsonrpc.ErrorResponse(id, CodeUpstream, msg, upstreamData(server))
}

// writeUpstreamError answers with one CodeUpstream error (id null) and an
// HTTP status.
func writeUpstreamError(w http.ResponseWriter, status int, server, msg string) {
	jsonrpc.WriteJSON(w, status, upstreamFailed(nil, server, msg))
}
