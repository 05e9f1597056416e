package a2agate

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/jsonstrict"
	"github.com/wardenhq/warden/sse"
)

// relayStream relays an SSE response (message/stream, tasks/resubscribe and
// their 1.0 names). Each event's data is a JSON-RPC response, decided as an
// inbound event before it is relayed (and flushed): allowed events go as
// they came, modified ones as rewritten; a deny, a malformed event, an event
// over the size limit or an upstream idle for StreamIdle ends the stream with
// a JSON-RPC error event for the request's id, and the upstream stream is
// closed. Comments (keep-alives) are relayed as they come.
func (g *Gate) relayStream(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, cancel func()) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(resp.StatusCode)
	_ = rc.Flush()

	var idled atomic.Bool
	idle := time.AfterFunc(g.opts.StreamIdle, func() { idled.Store(true); cancel() })
	defer idle.Stop()
	defer cancel() // closes the upstream stream, whatever ends the relay

	end := func(code int, msg, reason string, meta map[string]string) {
		writeEvent(w, rc, nil, rpcError(x.id, code, msg, x.method.dialect, reason, meta))
	}
	rd := sse.NewReader(resp.Body, int(g.opts.MaxBody))
	for {
		ev, err := rd.Next()
		if err != nil {
			switch {
			case r.Context().Err() != nil:
				// the client went away
			case idled.Load():
				g.opts.Logf("a2a %s: upstream stream idle for %s", x.ag.name, g.opts.StreamIdle)
				end(CodeUpstream, fmt.Sprintf("upstream agent %s: stream idle for %s", x.ag.name, g.opts.StreamIdle), nameUpstream, upstreamMeta(x.ag.name))
			case err != io.EOF:
				g.opts.Logf("a2a %s: upstream stream broke: %v", x.ag.name, err)
				end(CodeUpstream, "upstream agent "+x.ag.name+": stream broke", nameUpstream, upstreamMeta(x.ag.name))
			}
			return // at EOF an unfinished event is dropped, as SSE says
		}
		idle.Reset(g.opts.StreamIdle)
		switch {
		case ev.Comment != "":
			if _, err := io.WriteString(w, ev.Comment+"\n"); err != nil {
				return
			}
			_ = rc.Flush()
		case ev.TooLong:
			end(CodeUpstream, fmt.Sprintf("upstream agent %s: stream event over the limit (%d bytes)", x.ag.name, g.opts.MaxBody), nameUpstream, upstreamMeta(x.ag.name))
			return
		case !ev.HasData: // ends a run of comments, or an event without data (dropped)
			if _, err := io.WriteString(w, "\n"); err != nil {
				return
			}
			_ = rc.Flush()
		default:
			var msg map[string]any
			if err := json.Unmarshal(ev.Data, &msg); err != nil || msg == nil || (msg["result"] == nil && msg["error"] == nil) || jsonstrict.Check(ev.Data) != nil {
				g.opts.Logf("a2a %s: upstream sent a stream event that is not a JSON-RPC response", x.ag.name)
				end(CodeUpstream, "upstream agent "+x.ag.name+" sent a stream event that is not a JSON-RPC response", nameUpstream, upstreamMeta(x.ag.name))
				return
			}
			out, ok := g.decideInbound(r.Context(), x, msg)
			if !ok {
				writeEvent(w, rc, ev.Fields, out)
				return
			}
			if out == nil {
				out = ev.Data
			}
			if !writeEvent(w, rc, ev.Fields, out) {
				return
			}
		}
	}
}

// writeEvent writes one SSE event (its non-data fields, then data, one line
// per line of it) and flushes it. It reports whether the client took it.
func writeEvent(w io.Writer, rc *http.ResponseController, fields []string, data []byte) bool {
	if err := sse.Write(w, fields, data); err != nil {
		return false
	}
	_ = rc.Flush() // a writer that cannot flush still got the event
	return true
}
