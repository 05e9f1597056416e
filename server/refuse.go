package server

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/wardenhq/warden/jsonrpc"
)

// maxIDPeek bounds what a refused request's body is read for its
// JSON-RPC id: a body longer than this is answered with a null id.
const maxIDPeek = 64 << 10

// idPeekTimeout bounds how long a refused request's body is read for its
// JSON-RPC id: a body that has not arrived by then is answered with a null
// id. A client sends a small body with its headers, so it is not slowed
// by it; one that trickles its body holds the connection (and a slot of
// limits.connections) no longer than this.
const idPeekTimeout = 100 * time.Millisecond

// closeUnread readies a refusal (a response written without reading the
// request's body) to close the connection instead of reading what is left
// of the body: net/http otherwise reads up to 256 KiB of it, with no
// deadline, before it writes the response and again after, so a client
// trickling the body of a refused request would hold the connection (and
// a slot of limits.connections) as long as it liked. It answers with
// Connection: close and sets the connection's read deadline to now, so the
// response is written at once and the connection closed after it. A
// request without a body keeps its connection. Call it after reading what
// the refusal reads of the body, before writing the response.
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now()) // not every writer has deadlines (a test recorder)
}

// refuseHTTP is httpError for a refusal: the connection is closed after
// it if the request has a body (closeUnread).
func refuseHTTP(w http.ResponseWriter, r *http.Request, code int, msg string) {
	closeUnread(w, r)
	httpError(w, code, msg)
}

// refuse answers a 401 or 403 the guard gives before anything is decided
// or forwarded. On a JSON-RPC surface (rpc: the route's RPC) the body is a JSON-RPC error
// response — warden's own jsonrpc.CodeUnauthenticated or
// jsonrpc.CodeForbidden, with error.data.name — for the request's id when
// the body of a POST is one request of at most maxIDPeek bytes, else for a
// null id: a JSON-RPC client reads it as the answer to its call. Elsewhere
// it is httpError's {"error": msg}. The body is read for at most
// idPeekTimeout, and the connection is closed after the refusal if the
// request has a body (closeUnread).
func refuse(w http.ResponseWriter, r *http.Request, rpc bool, status int, msg string) {
	if !rpc {
		refuseHTTP(w, r, status, msg)
		return
	}
	code, name := jsonrpc.CodeForbidden, jsonrpc.NameForbidden
	if status == http.StatusUnauthorized {
		code, name = jsonrpc.CodeUnauthenticated, jsonrpc.NameUnauthenticated
	}
	id := json.RawMessage("null")
	read := false // the body was read to its end
	if r.Method == http.MethodPost && r.Body != nil {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(idPeekTimeout))
		if b, err := io.ReadAll(io.LimitReader(r.Body, maxIDPeek+1)); err == nil && len(b) <= maxIDPeek {
			id, read = jsonrpc.RequestID(b), true
			_ = rc.SetReadDeadline(time.Time{}) // the connection may serve another request
		}
	}
	if !read {
		closeUnread(w, r)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.ErrorResponse(id, code, msg, map[string]string{"name": name}))
}
