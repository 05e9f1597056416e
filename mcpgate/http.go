package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/noredirect"
	"github.com/wardenhq/warden/internal/sealid"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/relay"
)

// HTTPOptions configure the Streamable-HTTP gateway.
type HTTPOptions struct {
	// Timeout bounds an upstream call up to its answer: connecting, the
	// response headers and a JSON body (default 30s).
	Timeout time.Duration
	// IdleTimeout bounds the silence between two events of an SSE stream
	// (default 5m); a stream is never cut for its total length.
	IdleTimeout time.Duration
	// MaxMessage bounds a request body, a JSON response body and one SSE
	// event (default DefaultMaxMessage).
	MaxMessage int
	// MaxBatch bounds the entries of a batch in either direction
	// (limits.batch; default jsonrpc.DefaultMaxBatch). A client batch over
	// it is refused whole (-32600) before any entry is decided; a server
	// answer over it is refused as garbage.
	MaxBatch int
	// Client calls the upstreams (default: a client with a 10s dial timeout
	// and no total timeout, which would cut streams). Redirects are not
	// followed, unless Client has a CheckRedirect of its own.
	Client *http.Client
	// Logf reports upstream failures (never headers or bodies). Nil: silent.
	Logf func(format string, args ...any)
	// Pins pins each upstream's tools (see Pins); nil: no pinning.
	Pins *Pins
	// Sessions seals the Mcp-Session-Id handed to clients (see
	// session.go); replicas sharing its key continue each other's
	// sessions. Nil: a random key for this gateway (one replica).
	Sessions *sealid.Sealer
}

// asked are the requests of one POST the gateway waits answers for, by id
// key: the tool of a tools/call, the listing of a tools/list.
type asked map[string]askedReq

type askedReq struct {
	tool   *warden.Tool
	list   *listing
	covers []warden.Cover // the asks an approver approved for the request
}

// HTTP is the Streamable-HTTP MCP gateway, served at /mcp/{server}.
type HTTP struct {
	ups  map[string]*upstream
	opts HTTPOptions
}

type upstream struct {
	gate
	cfg    warden.Upstream
	params paramCache // its tools' x-mcp-header bindings (headers.go)
}

// Headers passed from the client to the upstream, and back.
var (
	requestHeaders  = []string{"Accept", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Authorization"}
	responseHeaders = []string{"Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Www-Authenticate", "Retry-After", "Cache-Control"}
)

// NewHTTP returns the gateway to upstreams (the config's mcp.servers), by name.
func NewHTTP(dec warden.Core, upstreams map[string]warden.Upstream, opts HTTPOptions) *HTTP {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 5 * time.Minute
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	// An upstream's redirect is not followed: the request fails as the
	// upstream failing (CodeUpstream, HTTP 502), and the log says where it
	// pointed.
	opts.Client = relay.Client(opts.Client, 64, 0)
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Sessions == nil {
		opts.Sessions = randomSealer()
	}
	h := &HTTP{ups: make(map[string]*upstream, len(upstreams)), opts: opts}
	for name, u := range upstreams {
		h.ups[name] = &upstream{gate: gate{dec: dec, server: name, maxBatch: batchLimit(opts.MaxBatch), pins: opts.Pins, endpoint: publicURL(u.URL)}, cfg: u}
	}
	return h
}

// writeRPCError answers with one JSON-RPC error (id null) and an HTTP status.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	jsonrpc.WriteJSON(w, status, errorMessage(nil, code, msg))
}

// ServeHTTP serves POST, GET and DELETE on /mcp/{server}.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/mcp/"), "/")
	up, ok := h.ups[name]
	if !ok || name == "" {
		writeUpstreamError(w, http.StatusNotFound, name, fmt.Sprintf("no MCP server %q is configured (mcp.servers)", name))
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, up)
	case http.MethodGet, http.MethodDelete:
		h.forward(w, r, up)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, CodeInvalidRequest, "method not allowed: "+r.Method)
	}
}

// newCall starts an upstream call, cut after Timeout; an SSE relay
// re-arms it after every event (IdleTimeout).
func (h *HTTP) newCall(parent context.Context) *relay.Call {
	return relay.Start(parent, h.opts.Timeout)
}

// request builds the upstream request: the client's MCP headers (r nil:
// none), the upstream's own session id (never the client's), then the
// configured ones (secrets: they win, and are never logged), and the
// request's trace (otel:).
func (h *HTTP) request(c *relay.Call, r *http.Request, up *upstream, s *session, method string, body []byte) (*http.Request, error) {
	var from http.Header
	if r != nil {
		from = r.Header
	}
	req, err := c.Request(relay.Request{Method: method, URL: up.cfg.URL, Body: body,
		From: from, Pass: requestHeaders, Own: s.apply, Set: up.cfg.Headers, Trace: true})
	if err != nil {
		return nil, err
	}
	stripStandardHeaders(req.Header) // Mcp-Method, Mcp-Name, Mcp-Param-*: rebuilt from the body (headers.go)
	return req, nil
}

// copyResponseHeaders relays the upstream's response headers; its
// Mcp-Session-Id goes to the client sealed (s.reply).
func (h *HTTP) copyResponseHeaders(w http.ResponseWriter, resp *http.Response, s *session) {
	for _, k := range responseHeaders {
		if v := resp.Header.Values(k); len(v) > 0 {
			w.Header()[k] = v
		}
	}
	h.reply(w.Header(), resp, s)
}

// upstreamError describes a failed call (a *relay.Error) without the URL's
// query or headers.
func (h *HTTP) upstreamError(up *upstream, err error) string {
	var e *relay.Error
	var re *noredirect.Error
	switch {
	case !errors.As(err, &e):
	case e.Kind == relay.Deadline:
		return fmt.Sprintf("MCP server %q did not answer within %s", up.server, h.opts.Timeout)
	case e.Kind == relay.Timeout:
		return fmt.Sprintf("MCP server %q timed out", up.server)
	case errors.As(e, &re):
		return fmt.Sprintf("MCP server %q %v", up.server, re)
	}
	return fmt.Sprintf("MCP server %q is unreachable", up.server)
}

// readBounded reads at most max bytes; more is an error.
func readBounded(r io.Reader, max int) ([]byte, error) { return relay.ReadAll(r, int64(max)) }

// joinBatch encodes messages as one message, or a batch when batch is set or
// there are several.
func joinBatch(msgs [][]byte, batch bool) []byte {
	if len(msgs) == 1 && !batch {
		return msgs[0]
	}
	return append(append([]byte{'['}, bytes.Join(msgs, []byte{','})...), ']')
}

// post handles a client POST: each message decided outbound, denied requests
// answered here, the rest forwarded; the answer (JSON or SSE) decided inbound.
func (h *HTTP) post(w http.ResponseWriter, r *http.Request, up *upstream) {
	body, err := readBounded(r.Body, h.opts.MaxMessage)
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, CodeInvalidRequest, err.Error())
		return
	}
	msgs, bad, isBatch, err := parse(body, up.maxBatch)
	var over *jsonrpc.BatchLimitError
	if errors.As(err, &over) {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, over.Error())
		return
	}
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, CodeParseError, "parse error: "+err.Error())
		return
	}
	if !h.checkRequestHeaders(w, r, up, msgs, isBatch) { // 2026-07-28: headers that disagree with the body
		return
	}
	s, ok := h.openSession(w, r, up)
	if !ok {
		return
	}
	s.noteInitialize(msgs)
	sid := s.up                  // the trace's session: the upstream's id, the same on every replica
	var local, fwd [][]byte      // answers given here; messages forwarded
	var fwdIDs []json.RawMessage // ids of the forwarded requests
	tools := asked{}
	for _, b := range bad {
		local = append(local, errorMessage(b.id, CodeInvalidRequest, b.why))
	}
	for _, msg := range msgs {
		v := up.decide(r.Context(), msg, warden.Outbound, sid, nil)
		isReq := msg.isRequest()
		if v.deny {
			switch {
			case isReq:
				local = append(local, v.denial(msg.id))
			case !msg.isNotification(): // the server gets an error instead of the client's answer
				fwd = append(fwd, v.denial(msg.id))
			}
			continue
		}
		fwd = append(fwd, v.out)
		if isReq {
			fwdIDs = append(fwdIDs, msg.id)
			if t, l := up.toolOf(msg), listingOf(msg); t != nil || l != nil || v.covers != nil {
				tools[idKey(msg.m["id"])] = askedReq{tool: t, list: l, covers: v.covers}
			}
		}
	}
	if len(fwd) == 0 {
		h.answerLocal(w, local, isBatch)
		return
	}

	c := h.newCall(r.Context())
	defer c.Done()
	req, err := h.request(c, r, up, s, http.MethodPost, joinBatch(fwd, isBatch && len(fwd) > 1))
	if err != nil {
		h.failRequests(w, up, fwdIDs, local, isBatch, fmt.Sprintf("MCP server %q: bad upstream URL", up.server))
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	h.setStandardHeaders(c.Context(), req, r, up, fwd[0], len(fwd) == 1) // from what is forwarded, after any modify
	resp, err := c.Do(h.opts.Client, req)
	if err != nil {
		msg := h.upstreamError(up, err)
		h.opts.Logf("mcp %s: POST: %s%s", up.server, msg, noredirect.Target(err))
		h.failRequests(w, up, fwdIDs, local, isBatch, msg)
		return
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && sid == "" {
		sid = s // the session the initialize response opens
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode >= 500 && len(fwdIDs) > 0:
		h.opts.Logf("mcp %s: POST: upstream answered HTTP %d", up.server, resp.StatusCode)
		h.failRequests(w, up, fwdIDs, local, isBatch, fmt.Sprintf("MCP server %q failed (HTTP %d)", up.server, resp.StatusCode))
	case resp.StatusCode == http.StatusAccepted || (resp.StatusCode/100 == 2 && resp.ContentLength == 0):
		if len(local) > 0 {
			h.copyResponseHeaders(w, resp, s)
			h.answerLocal(w, local, isBatch)
			return
		}
		h.copyResponseHeaders(w, resp, s)
		w.WriteHeader(resp.StatusCode)
	case resp.StatusCode == http.StatusOK && relay.IsEventStream(ct):
		h.relaySSE(w, r, resp, c, up, s, sid, tools, local)
	case resp.StatusCode == http.StatusOK:
		h.relayJSON(w, r, resp, c, up, s, sid, tools, fwdIDs, local, isBatch)
	default: // 4xx (session expired, auth, ...): the client must see it as is
		h.passThrough(w, resp, s)
	}
}

// answerLocal answers with the gateway's own responses only.
func (h *HTTP) answerLocal(w http.ResponseWriter, local [][]byte, batch bool) {
	if len(local) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	jsonrpc.WriteJSON(w, http.StatusOK, joinBatch(local, batch))
}

// failRequests answers every forwarded request with a CodeUpstream error.
func (h *HTTP) failRequests(w http.ResponseWriter, up *upstream, ids []json.RawMessage, local [][]byte, batch bool, msg string) {
	if len(ids) == 0 && len(local) == 0 {
		writeUpstreamError(w, http.StatusBadGateway, up.server, msg)
		return
	}
	for _, id := range ids {
		local = append(local, upstreamFailed(id, up.server, msg))
	}
	h.answerLocal(w, local, batch)
}

// passThrough relays a response the gateway does not inspect (errors,
// DELETE), bounded.
func (h *HTTP) passThrough(w http.ResponseWriter, resp *http.Response, s *session) {
	h.copyResponseHeaders(w, resp, s)
	body, _ := readBounded(resp.Body, h.opts.MaxMessage)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// inbound decides one message from the server; it returns what to send to
// the client (nil: nothing). A denied server request is answered to the
// server with a CodeDenied error.
func (h *HTTP) inbound(ctx context.Context, up *upstream, r *http.Request, sid string, msg *message, tools asked) []byte {
	var a askedReq
	if !msg.isRequest() && !msg.isNotification() {
		a = tools[idKey(msg.m["id"])]
		up.params.learn(msg) // a tools/list answer: which arguments become Mcp-Param-* headers
	}
	v := up.decideList(ctx, msg, warden.Inbound, sid, answered{tool: a.tool, covers: a.covers}, a.list)
	if !v.deny {
		return v.out
	}
	switch {
	case msg.isRequest():
		go h.answerServer(up, r, sid, v.denial(msg.id))
		return nil
	case msg.isNotification():
		return nil
	}
	return v.denial(msg.id)
}

// answerServer POSTs the gateway's answer to a server request upstream.
func (h *HTTP) answerServer(up *upstream, r *http.Request, sid string, body []byte) {
	c := h.newCall(context.Background())
	defer c.Done()
	req, err := h.request(c, nil, up, nil, http.MethodPost, body)
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if r != nil {
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
			req.Header.Set("Mcp-Protocol-Version", v)
		}
	}
	resp, err := c.Do(h.opts.Client, req)
	if err != nil {
		h.opts.Logf("mcp %s: answering a denied server request: %s%s", up.server, h.upstreamError(up, err), noredirect.Target(err))
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, int64(h.opts.MaxMessage)))
	resp.Body.Close()
}

// relayJSON decides every message of a JSON answer and writes the result.
func (h *HTTP) relayJSON(w http.ResponseWriter, r *http.Request, resp *http.Response, c *relay.Call, up *upstream, s *session, sid string, tools asked, ids []json.RawMessage, local [][]byte, batch bool) {
	body, err := readBounded(resp.Body, h.opts.MaxMessage)
	if err != nil {
		msg := fmt.Sprintf("MCP server %q: reading its answer: %v", up.server, err)
		if c.TimedOut() {
			msg = h.upstreamError(up, c.Failure(err))
		}
		h.failRequests(w, up, ids, local, batch, msg)
		return
	}
	c.Stop()
	msgs, _, respBatch, err := parse(body, up.maxBatch)
	if err != nil || len(msgs) == 0 {
		h.opts.Logf("mcp %s: the server answered something that is not JSON-RPC; dropped", up.server)
		h.failRequests(w, up, ids, local, batch, fmt.Sprintf("MCP server %q answered something that is not JSON-RPC", up.server))
		return
	}
	out := local
	for _, msg := range msgs {
		s.noteNegotiated(msg)
		if b := h.inbound(r.Context(), up, r, sid, msg, tools); b != nil {
			out = append(out, b)
		}
	}
	h.copyResponseHeaders(w, resp, s)
	if len(out) == 0 {
		w.Header().Del("Content-Type")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	jsonrpc.WriteJSON(w, http.StatusOK, joinBatch(out, batch || respBatch))
}

// forward relays a request without a body to inspect: GET, which opens the
// server → client SSE stream (its events are inspected one by one), and
// DELETE, the end of a session (relayed as it is).
func (h *HTTP) forward(w http.ResponseWriter, r *http.Request, up *upstream) {
	s, ok := h.openSession(w, r, up)
	if !ok {
		return
	}
	c := h.newCall(r.Context())
	defer c.Done()
	req, err := h.request(c, r, up, s, r.Method, nil)
	if err != nil {
		writeUpstreamError(w, http.StatusBadGateway, up.server, fmt.Sprintf("MCP server %q: bad upstream URL", up.server))
		return
	}
	resp, err := c.Do(h.opts.Client, req)
	if err != nil {
		msg := h.upstreamError(up, err)
		h.opts.Logf("mcp %s: %s: %s%s", up.server, r.Method, msg, noredirect.Target(err))
		writeUpstreamError(w, http.StatusBadGateway, up.server, msg)
		return
	}
	defer resp.Body.Close()
	if r.Method == http.MethodGet && resp.StatusCode == http.StatusOK && relay.IsEventStream(resp.Header.Get("Content-Type")) {
		h.relaySSE(w, r, resp, c, up, s, s.up, nil, nil)
		return
	}
	h.passThrough(w, resp, s)
}

// relaySSE relays an SSE stream, deciding the JSON-RPC message(s) in each
// event's data before it is written; local answers go first. The call's
// timer becomes an idle timeout: re-armed after every event (keep-alive
// comments are dropped and do not count).
func (h *HTTP) relaySSE(w http.ResponseWriter, r *http.Request, resp *http.Response, c *relay.Call, up *upstream, s *session, sid string, tools asked, local [][]byte) {
	h.copyResponseHeaders(w, resp, s)
	st := relay.OpenStream(w, http.StatusOK)
	for _, l := range local {
		if writeEvent(st, "", "message", l) != nil {
			return
		}
	}
	end := st.Relay(c, resp.Body, relay.Events{Max: h.opts.MaxMessage, Idle: h.opts.IdleTimeout}, func(ev relay.Event) error {
		return h.dispatchSSE(r.Context(), st, up, r, sid, tools, ev)
	})
	if end.Why == relay.Idle {
		h.opts.Logf("mcp %s: SSE stream idle for %s; closed", up.server, h.opts.IdleTimeout)
	}
}

// writeEvent writes one event of MCP's stream: its id and type when set.
func writeEvent(st *relay.Stream, id, event string, data []byte) error {
	var fields []string
	if id != "" {
		fields = append(fields, "id: "+id)
	}
	if event != "" {
		fields = append(fields, "event: "+event)
	}
	return st.Event(fields, data)
}

// dispatchSSE decides one event of the upstream's stream and writes what
// the client gets: its messages as decided (a refused response becomes
// an error for its id), the last one carrying the event id.
func (h *HTTP) dispatchSSE(ctx context.Context, st *relay.Stream, up *upstream, r *http.Request, sid string, tools asked, ev relay.Event) error {
	id, event := ev.ID, ev.Type
	if ev.TooLong {
		h.opts.Logf("mcp %s: an SSE event over %d bytes; dropped", up.server, h.opts.MaxMessage)
		return nil
	}
	if ev.Retry != "" {
		if err := st.Line("retry: " + ev.Retry); err != nil {
			return err
		}
	}
	if !ev.HasData || len(bytes.TrimSpace(ev.Data)) == 0 { // priming or keep-alive events pass as they are
		if id == "" && ev.Retry == "" {
			return nil
		}
		return writeEvent(st, id, event, nil)
	}
	if event != "" && event != "message" { // not a JSON-RPC event: not MCP's, drop it
		h.opts.Logf("mcp %s: SSE event of type %q dropped", up.server, event)
		return nil
	}
	msgs, _, _, err := parse(ev.Data, up.maxBatch)
	if err != nil || len(msgs) == 0 {
		h.opts.Logf("mcp %s: an SSE event that is not JSON-RPC; dropped", up.server)
		return nil
	}
	var out [][]byte
	for _, msg := range msgs {
		if b := h.inbound(ctx, up, r, sid, msg, tools); b != nil {
			out = append(out, b)
		}
	}
	for i, b := range out {
		eid := ""
		if i == len(out)-1 {
			eid = id // the event id marks the position for resumption
		}
		if err := writeEvent(st, eid, "message", b); err != nil {
			return err
		}
	}
	if len(out) == 0 && id != "" {
		return writeEvent(st, id, event, nil)
	}
	return nil
}
