package a2agate

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/wardenhq/warden/relay"
)

// errEnded ends a relayed stream after its last event was written.
var errEnded = errors.New("stream ended by the proxy")

// relayStream relays an SSE response (message/stream, tasks/resubscribe and
// their 1.0 names). Each event's data is a JSON-RPC response, decided as an
// inbound event before it is relayed (and flushed): allowed events go as
// they came, modified ones as rewritten; a deny, a malformed event, an event
// over the size limit or an upstream idle for StreamIdle ends the stream with
// a JSON-RPC error event for the request's id, and the upstream stream is
// closed (c.Done). Comments (keep-alives) are relayed as they come.
func (g *Gate) relayStream(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, c *relay.Call) {
	w.Header().Set("X-Accel-Buffering", "no")
	st := relay.OpenStream(w, resp.StatusCode)
	end := func(code int, msg, reason string, meta map[string]string) {
		_ = st.Event(nil, rpcError(x.id, code, msg, x.method.dialect, reason, meta))
	}
	e := st.Relay(c, resp.Body, relay.Events{Max: int(g.opts.MaxBody), Idle: g.opts.StreamIdle, KeepAlive: true}, func(ev relay.Event) error {
		switch {
		case ev.TooLong:
			end(CodeUpstream, fmt.Sprintf("upstream agent %s: stream event over the limit (%d bytes)", x.ag.name, g.opts.MaxBody), nameUpstream, upstreamMeta(x.ag.name))
			return errEnded
		case !ev.HasData: // ends a run of comments, or an event without data (dropped)
			if err := st.Line(""); err != nil {
				return err
			}
			return st.Flush()
		}
		msg, ok := responseOf(ev.Data)
		if !ok {
			g.opts.Logf("a2a %s: upstream sent a stream event that is not a JSON-RPC response", x.ag.name)
			end(CodeUpstream, "upstream agent "+x.ag.name+" sent a stream event that is not a JSON-RPC response", nameUpstream, upstreamMeta(x.ag.name))
			return errEnded
		}
		out, ok := g.decideInbound(r.Context(), x, msg)
		if !ok {
			_ = st.Event(ev.Fields, out)
			return errEnded
		}
		if out == nil {
			out = ev.Data
		}
		return st.Event(ev.Fields, out)
	})
	switch e.Why {
	case relay.Idle:
		g.opts.Logf("a2a %s: upstream stream idle for %s", x.ag.name, g.opts.StreamIdle)
		end(CodeUpstream, fmt.Sprintf("upstream agent %s: stream idle for %s", x.ag.name, g.opts.StreamIdle), nameUpstream, upstreamMeta(x.ag.name))
	case relay.Broken:
		g.opts.Logf("a2a %s: upstream stream broke: %v", x.ag.name, e.Err)
		end(CodeUpstream, "upstream agent "+x.ag.name+": stream broke", nameUpstream, upstreamMeta(x.ag.name))
	}
	// At EOF an unfinished event is dropped, as SSE says; a client gone
	// gets nothing more.
}
