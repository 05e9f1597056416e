package a2agate

import (
	"net/http"
	"strings"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/relay"
)

// nameUpstream is the ErrorInfo reason (1.0) and data.name (0.3) of a
// CodeUpstream error.
const nameUpstream = jsonrpc.NameUpstream

// upstreamMeta is the data of a CodeUpstream error for the agent named.
func upstreamMeta(agent string) map[string]string {
	return map[string]string{"name": nameUpstream, "upstream": agent}
}

// upstreamFailed is the CodeUpstream answer to x: its agent failed, timed
// out, broke the stream or sent something that is not a JSON-RPC answer
// within the limits. A2A's own codes (-32001..-32009) and -32603 stay the
// agent's: a client tells the agent's failure from warden's.
func upstreamFailed(x *exchange, msg string) []byte {
	return rpcError(x.id, CodeUpstream, msg, x.method.dialect, nameUpstream, upstreamMeta(x.ag.name))
}

// wantsSSE reports whether r calls a streaming method (message/stream,
// tasks/resubscribe and their 1.0 names) and accepts text/event-stream.
func wantsSSE(r *http.Request, m method) bool {
	return (m.event == MethodStream || m.event == MethodResubscribe) &&
		strings.Contains(strings.ToLower(r.Header.Get("Accept")), "text/event-stream")
}

// refuse answers x with body, a JSON-RPC error, before anything of the
// agent's was relayed. A streaming call that accepts SSE gets it as the one
// event of a stream, as a2a-go's own server answers such errors: its client
// reads a streaming answer as SSE whatever the Content-Type, and took a
// plain JSON error for an empty stream. Others get it as JSON.
func refuse(w http.ResponseWriter, x *exchange, body []byte) {
	if !x.wantsSSE {
		jsonrpc.WriteJSON(w, http.StatusOK, body)
		return
	}
	_ = relay.OpenStream(w, http.StatusOK).Event(nil, body)
}
