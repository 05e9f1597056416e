package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/wardenhq/warden/jsonrpc"
)

// maxIDPeek bounds what a refused request's body is read for its
// JSON-RPC id: a body longer than this is answered with a null id.
const maxIDPeek = 64 << 10

// rpcSurface reports whether path is a JSON-RPC surface: /aos, /acs,
// /mcp/{server}, /a2a/{agent} (its agent card is not).
func rpcSurface(path string) bool {
	switch {
	case path == "/aos" || path == "/acs" || strings.HasPrefix(path, "/mcp/"):
		return true
	case strings.HasPrefix(path, "/a2a/"):
		return !strings.Contains(path, "/.well-known/")
	}
	return false
}

// refuse answers a 401 or 403 the guard gives before anything is decided
// or forwarded. On a JSON-RPC surface the body is a JSON-RPC error
// response — warden's own jsonrpc.CodeUnauthenticated or
// jsonrpc.CodeForbidden, with error.data.name — for the request's id when
// the body of a POST is one request of at most maxIDPeek bytes, else for a
// null id: a JSON-RPC client reads it as the answer to its call. Elsewhere
// it is httpError's {"error": msg}.
func refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if !rpcSurface(r.URL.Path) {
		httpError(w, status, msg)
		return
	}
	code, name := jsonrpc.CodeForbidden, jsonrpc.NameForbidden
	if status == http.StatusUnauthorized {
		code, name = jsonrpc.CodeUnauthenticated, jsonrpc.NameUnauthenticated
	}
	id := json.RawMessage("null")
	if r.Method == http.MethodPost && r.Body != nil {
		if b, err := io.ReadAll(io.LimitReader(r.Body, maxIDPeek+1)); err == nil && len(b) <= maxIDPeek {
			id = jsonrpc.RequestID(b)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.ErrorResponse(id, code, msg, map[string]string{"name": name}))
}
