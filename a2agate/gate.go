// Package a2agate is warden's A2A proxy (docs/gateways.md): /a2a/{agent} forwards
// A2A JSON-RPC to a configured upstream agent, and every message in either
// direction — each request, each response, each streamed (SSE) event — is an
// event decided by the guardian chain and recorded in the trace before it is
// passed on. A deny answers the client with warden's own JSON-RPC error
// CodeDenied (-31900, refusal.go) and the other side never sees the
// message; a modify passes the rewritten message on.
// The agent card is served with its URLs pointing at the proxy.
package a2agate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/noredirect"
	"github.com/wardenhq/warden/internal/sealid"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
	"github.com/wardenhq/warden/relay"
)

// Defaults of Options.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultStreamIdle = 2 * time.Minute
)

// JSON-RPC error codes warden answers with.
const (
	CodeDenied         = jsonrpc.CodeDenied   // a deny (-31900, warden's own: docs/gateways.md)
	CodeUpstream       = jsonrpc.CodeUpstream // the agent is not configured, failed, timed out or sent garbage (-31901)
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternal       = jsonrpc.CodeInternal // the upstream failed, timed out or sent garbage
)

// Options tune the proxy. The zero value is usable.
type Options struct {
	// PublicURL is the base URL clients reach warden at (e.g.
	// "https://warden.example.com"); the agent card points at
	// PublicURL/a2a/{agent}. Empty: the scheme and Host of the card request.
	PublicURL string
	// Client calls the upstreams; nil: a client with dial, TLS and header
	// timeouts and no overall timeout (streams are long-lived). Redirects
	// are not followed, unless Client has a CheckRedirect of its own.
	Client *http.Client
	// Timeout bounds a non-streaming call to an upstream (until its whole
	// response is read) and the agent card fetch. Default DefaultTimeout.
	Timeout time.Duration
	// StreamIdle ends an SSE stream whose upstream sent nothing (not even a
	// keep-alive comment) for this long. Default DefaultStreamIdle.
	StreamIdle time.Duration
	// MaxBody caps a request, a response and one streamed event, in bytes.
	// Default jsonrpc.DefaultMaxBody.
	MaxBody int64
	// Logf logs upstream failures (never headers or message contents); nil: silent.
	Logf func(format string, args ...any)
	// AgBOM, when set, records each agent card fetched as an a2a_peer in
	// the AgBOM of the caller (see agbom.go).
	AgBOM agbom.Store
	// Tasks seals the task ids handed to clients (see tasks.go); replicas
	// sharing its key serve each other's tasks. Nil: a random key for
	// this proxy (one replica).
	Tasks *sealid.Sealer
}

// Gate is the A2A proxy handler; New builds it.
type Gate struct {
	dec      warden.Core
	agents   map[string]*agent
	opts     Options
	client   *http.Client
	sessions *sessions
	tasks    *sealid.Sealer
}

// agent is one configured upstream.
type agent struct {
	name    string
	url     string            // the upstream JSON-RPC endpoint
	public  string            // url without userinfo, query or fragment: what is recorded
	headers map[string]string // configured headers: secrets, never logged
}

// New returns the handler of /a2a/{agent} for the configured agents.
func New(dec warden.Core, agents map[string]warden.Upstream, opts Options) *Gate {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.StreamIdle <= 0 {
		opts.StreamIdle = DefaultStreamIdle
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = jsonrpc.DefaultMaxBody
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	g := &Gate{dec: dec, agents: map[string]*agent{}, opts: opts, client: opts.Client, sessions: newSessions(), tasks: opts.Tasks}
	if g.tasks == nil {
		// A random key: ids open on this process only. crypto/rand does
		// not fail on Go's platforms (it aborts the program instead).
		g.tasks, _ = sealid.New(nil, 0)
	}
	// An upstream's redirect is not followed: the call fails as the
	// upstream failing, and the log says where it pointed.
	g.client = relay.Client(g.client, 32, opts.Timeout)
	for name, up := range agents {
		if name == "" {
			name = up.Name
		}
		a := &agent{name: name, url: up.URL, public: up.URL, headers: up.Headers}
		if u, err := url.Parse(up.URL); err == nil {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			a.public = u.String()
		}
		g.agents[name] = a
	}
	return g
}

// ServeHTTP routes POST /a2a/{agent} (or /a2a/{agent}/) to the JSON-RPC
// proxy and GET /a2a/{agent}/.well-known/agent-card.json (or agent.json) to
// the rewritten agent card.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/a2a/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	name, sub, _ := strings.Cut(rest, "/")
	ag := g.agents[name]
	switch {
	case ag == nil:
		jsonrpc.WriteJSON(w, http.StatusNotFound, rpcError(nil, CodeUpstream, fmt.Sprintf("unknown A2A agent %q (a2a.agents)", name), dialect03, nameUpstream, upstreamMeta(name)))
	case sub == "":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			jsonrpc.WriteJSON(w, http.StatusMethodNotAllowed, rpcError(nil, CodeInvalidRequest, "A2A JSON-RPC takes POST", dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
			return
		}
		g.serveRPC(w, r, ag)
	case sub == ".well-known/agent-card.json" || sub == ".well-known/agent.json":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		g.serveCard(w, r, ag)
	default:
		http.NotFound(w, r)
	}
}

// exchange is one proxied JSON-RPC call.
type exchange struct {
	ag       *agent
	method   method
	id       json.RawMessage // "null" when absent
	client   string          // the client's remote address
	session  string          // the request's session id (context id)
	isExtCrd bool            // the result is an agent card, to be rewritten
	self     string          // the proxy's own URL for this agent
	bind     sealid.Binding  // what the task ids of this caller and agent are bound to
	wantsSSE bool            // a streaming method whose client accepts text/event-stream (refuse)
	// covers are the asks an approver approved for the request: its
	// response and streamed events are not asked about again by the same
	// policies (warden.Cover).
	covers []warden.Cover
}

func (g *Gate) serveRPC(w http.ResponseWriter, r *http.Request, ag *agent) {
	body, err := relay.ReadAll(r.Body, g.opts.MaxBody)
	if err != nil {
		why := "reading the request: " + err.Error()
		var tooLarge *relay.TooLargeError
		if errors.As(err, &tooLarge) {
			why = fmt.Sprintf("request body over the limit (%d bytes)", g.opts.MaxBody)
		}
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeInvalidRequest, why, dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		return
	}
	if !json.Valid(body) {
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeParseError, "parse error: invalid JSON", dialect03, jsonrpc.CodeName(CodeParseError), nil))
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeInvalidRequest, "batch requests are not part of A2A", dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		return
	}
	if err := jsonstrict.Check(body); err != nil {
		// Readers would disagree on what this says: the policies would see
		// one thing and the agent read another. Refused, never forwarded.
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeInvalidRequest, "invalid request: "+err.Error(), dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		return
	}
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil || msg == nil {
		if json.Valid(body) {
			jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeInvalidRequest, "expected a JSON-RPC request object", dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		} else {
			jsonrpc.WriteJSON(w, http.StatusOK, rpcError(nil, CodeParseError, "parse error: invalid JSON", dialect03, jsonrpc.CodeName(CodeParseError), nil))
		}
		return
	}
	// The envelope is read with its raw id, so an id is echoed byte for
	// byte (a large number stays exact).
	env, _ := jsonrpc.ReadEnvelope(body)
	id := json.RawMessage(env.ID)
	if id == nil {
		id = json.RawMessage("null")
	}
	method, isStr := msg["method"].(string)
	if env.Method != nil && !isStr {
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(id, CodeInvalidRequest, "invalid request: method must be a string", dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		return
	}
	if !env.VersionOK() || env.Method == nil {
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(id, CodeInvalidRequest, `expected a JSON-RPC 2.0 request ("jsonrpc": "2.0" and a "method")`, dialect03, jsonrpc.CodeName(CodeInvalidRequest), nil))
		return
	}
	m, ok := methods[method]
	if !ok {
		jsonrpc.WriteJSON(w, http.StatusOK, rpcError(id, CodeMethodNotFound, "method not found: "+method+" (not an A2A method warden proxies)", dialect03, jsonrpc.CodeName(CodeMethodNotFound), nil))
		return
	}
	if m.event == MethodSend || m.event == MethodStream {
		if _, isObj := getObj(msg, "params")["message"].(map[string]any); !isObj {
			jsonrpc.WriteJSON(w, http.StatusOK, rpcError(id, CodeInvalidParams, "invalid params: params.message: expected a Message object", m.dialect, jsonrpc.CodeName(CodeInvalidParams), nil))
			return
		}
	}
	x := &exchange{ag: ag, method: m, id: id, client: r.RemoteAddr, self: g.selfURL(r, ag),
		isExtCrd: m.event == MethodExtendedCard, bind: taskBinding(r, ag), wantsSSE: wantsSSE(r, m)}
	params := getObj(msg, "params")
	taskCtx, opened, err := g.openRequestTasks(x.bind, m, params)
	if err != nil {
		// Never the id itself in the log: it is the client's handle on the task.
		g.opts.Logf("a2a %s: %s names a task id that does not open here; answered task not found", ag.name, m.event)
		refuse(w, x, rpcError(id, CodeTaskNotFound, "task not found: the task id is unknown to warden, expired, or another agent's or caller's", m.dialect, "TASK_NOT_FOUND", nil))
		return
	}
	if opened { // the upstream gets its own task ids
		unsealed, _ := restore(msg, id)
		if body, err = json.Marshal(unsealed); err != nil {
			jsonrpc.WriteJSON(w, http.StatusOK, rpcError(id, CodeInvalidRequest, "invalid request: "+err.Error(), m.dialect, jsonrpc.CodeName(CodeInvalidRequest), nil))
			return
		}
	}
	x.session = g.sessions.session(params)
	if c, t := requestIDs(params); c == "" && taskCtx != "" {
		x.session = taskCtx // the task's context, sealed in its id: known on any replica
		g.sessions.put(t, taskCtx)
	}

	// The request: an outbound event.
	ev := g.event(x, warden.Outbound, msg, x.session, idText(id))
	out, derr := g.dec.Decide(r.Context(), ev)
	if derr != nil {
		g.opts.Logf("a2a %s: %s not recorded: %v", ag.name, m.event, derr)
	}
	out = approval.Settle(r.Context(), g.dec, out) // an asked request waits for its approval
	x.covers = out.Covers()
	switch out.Verdict {
	case warden.Allow:
	case warden.Modify:
		changed, ok := restore(out.Payload, id)
		if !ok || !sameEvent(changed, m.event) {
			refuse(w, x, denied(x, "a modify changed the request's method or shape", &out))
			return
		}
		if body, err = json.Marshal(changed); err != nil {
			refuse(w, x, denied(x, "the modified request does not encode: "+err.Error(), &out))
			return
		}
	default:
		refuse(w, x, denied(x, out.Reason, &out))
		return
	}
	g.forward(w, r, x, body)
}

// event builds the A2A event of one JSON-RPC message: the payload is the
// message as it is on the wire; its two sides (seed 004's
// params.context.from/to) go in the envelope: the client is known by its
// address, the agent by its configured name and URL.
func (g *Gate) event(x *exchange, dir string, msg map[string]any, session, reqID string) *warden.Event {
	client := map[string]any{"role": "client", "address": x.client}
	server := map[string]any{"role": "server", "agent": map[string]any{"name": x.ag.name, "url": x.ag.public}}
	c := map[string]any{"from": client, "to": server}
	var covers []warden.Cover
	if dir == warden.Inbound {
		c = map[string]any{"from": server, "to": client}
		covers = x.covers
	}
	return &warden.Event{
		Name: x.method.event, Surface: warden.SurfaceA2A, Direction: dir, RequestID: reqID,
		Payload: msg, Envelope: warden.Envelope{Context: c, SessionID: session, Server: x.ag.name, Approved: covers},
	}
}

// restore turns a modified payload back into a wire message whose id is the
// original one. It reports false when there is no payload.
func restore(p map[string]any, id json.RawMessage) (map[string]any, bool) {
	if p == nil {
		return nil, false
	}
	m := make(map[string]any, len(p))
	for k, v := range p {
		m[k] = v
	}
	m["jsonrpc"] = jsonrpc.Version
	if string(id) == "null" {
		delete(m, "id")
	} else {
		m["id"] = id
	}
	return m, true
}

// sameEvent reports whether a modified request still is the event that was
// decided (a modify may not turn a tasks/get into a message/send).
func sameEvent(m map[string]any, event string) bool {
	s, _ := m["method"].(string)
	mm, ok := methods[s]
	return ok && mm.event == event
}

// forward sends the (allowed, maybe modified) request upstream and relays
// its answer, each response or streamed event decided as an inbound event.
func (g *Gate) forward(w http.ResponseWriter, r *http.Request, x *exchange, body []byte) {
	c := relay.Start(r.Context(), g.opts.Timeout)
	defer c.Done() // closes the upstream stream, whatever ends the relay
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(g.opts.Timeout + 15*time.Second))

	req, err := c.Request(relay.Request{Method: http.MethodPost, URL: x.ag.url, Body: body,
		From: r.Header, Pass: passRequest, Own: ownHeaders(r.Header), Set: x.ag.headers, Trace: true})
	if err != nil {
		refuse(w, x, upstreamFailed(x, "upstream agent "+x.ag.name+": bad URL"))
		return
	}
	resp, err := c.Do(g.client, req)
	if err != nil {
		if c.Gone() {
			return // the client went away
		}
		g.upstreamError(w, x, err)
		return
	}
	defer resp.Body.Close()
	copyResponseHeaders(w.Header(), resp.Header)
	if relay.IsEventStream(resp.Header.Get("Content-Type")) {
		c.Stop()
		g.relayStream(w, r, x, resp, c)
		return
	}
	data, err := relay.ReadAll(resp.Body, g.opts.MaxBody)
	if err != nil {
		var tooLarge *relay.TooLargeError
		if !errors.As(err, &tooLarge) {
			if c.Gone() {
				return
			}
			g.upstreamError(w, x, c.Failure(err))
			return
		}
		c.Stop()
		refuse(w, x, upstreamFailed(x, fmt.Sprintf("upstream agent %s: response over the limit (%d bytes)", x.ag.name, g.opts.MaxBody)))
		return
	}
	c.Stop()
	if len(bytes.TrimSpace(data)) == 0 && resp.StatusCode/100 == 2 {
		w.WriteHeader(resp.StatusCode) // an answer to a notification: nothing to decide
		return
	}
	msg, ok := responseOf(data)
	if !ok {
		why := "sent an invalid JSON-RPC response (or one readers would read differently)"
		if resp.StatusCode/100 != 2 {
			why = fmt.Sprintf("answered HTTP %d", resp.StatusCode)
		}
		g.opts.Logf("a2a %s: upstream %s", x.ag.name, why)
		refuse(w, x, upstreamFailed(x, "upstream agent "+x.ag.name+" "+why))
		return
	}
	out, ok := g.decideInbound(r.Context(), x, msg)
	if !ok {
		jsonrpc.WriteJSON(w, http.StatusOK, out)
		return
	}
	if out != nil {
		data = out
	}
	jsonrpc.WriteJSON(w, resp.StatusCode, data)
}

// responseOf decodes an upstream's answer or streamed event: a JSON-RPC
// response (a result or an error) that every reader reads alike
// (jsonstrict).
func responseOf(data []byte) (map[string]any, bool) {
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil || msg == nil || (msg["result"] == nil && msg["error"] == nil) || jsonstrict.Check(data) != nil {
		return nil, false
	}
	return msg, true
}

// decideInbound decides one response (or streamed event) msg. It returns the
// bytes to relay (nil: the original ones) and true, or a JSON-RPC error to
// send instead and false.
func (g *Gate) decideInbound(ctx context.Context, x *exchange, msg map[string]any) ([]byte, bool) {
	session := g.sessions.learn(getObj(msg, "result"), x.session)
	rid := x.id
	if raw, err := json.Marshal(msg["id"]); err == nil && msg["id"] != nil {
		rid = raw
	}
	ev := g.event(x, warden.Inbound, msg, session, idText(rid))
	out, derr := g.dec.Decide(ctx, ev)
	if derr != nil {
		g.opts.Logf("a2a %s: %s response not recorded: %v", x.ag.name, x.method.event, derr)
	}
	out = approval.Settle(ctx, g.dec, out) // an asked response waits for its approval
	var relay map[string]any
	switch out.Verdict {
	case warden.Allow:
	case warden.Modify:
		m, ok := restore(out.Payload, x.id)
		if !ok {
			return denied(x, "a modify removed the response", &out), false
		}
		relay = m
	default:
		return denied(x, out.Reason, &out), false
	}
	if x.isExtCrd {
		if relay == nil {
			relay = msg
		}
		if card := getObj(relay, "result"); card != nil {
			rewriteCard(card, x.self)
		}
	}
	src := relay
	if src == nil {
		src = msg
	}
	if sealed, changed := g.sealResponse(x.bind, session, src); changed { // the client gets sealed task ids (tasks.go)
		if relay == nil {
			sealed, _ = restore(sealed, x.id)
		}
		relay = sealed
	}
	if relay == nil {
		return nil, true
	}
	b, err := json.Marshal(relay)
	if err != nil {
		return denied(x, "the modified response does not encode: "+err.Error(), &out), false
	}
	return b, true
}

// upstreamError answers a failed upstream call (a *relay.Error) in time,
// as a JSON-RPC error.
func (g *Gate) upstreamError(w http.ResponseWriter, x *exchange, err error) {
	var why string
	var e *relay.Error
	var re *noredirect.Error
	switch {
	case !errors.As(err, &e):
		why = "unreachable: " + err.Error()
	case e.Kind == relay.Deadline || e.Kind == relay.Timeout:
		why = fmt.Sprintf("did not answer within %s", g.opts.Timeout)
	case errors.As(e, &re):
		why = re.Error()
	default:
		why = "unreachable: " + e.Err.Error() // without the URL, which may hold a token
	}
	g.opts.Logf("a2a %s: upstream %s %s%s", x.ag.name, x.ag.public, why, noredirect.Target(err))
	refuse(w, x, upstreamFailed(x, "upstream agent "+x.ag.name+" "+why))
}

// denied is the CodeDenied answer to a denied message: error.data (0.3)
// or its ErrorInfo's metadata (1.0) carries the reason and the trace record
// id (jsonrpc.DenyData), and decision "deny".
func denied(x *exchange, reason string, out *warden.Outcome) []byte {
	if reason == "" {
		reason = "denied"
	}
	var meta map[string]string
	if out != nil {
		meta = jsonrpc.DenyData(reason, out.RecordID, out.PolicyID, out.ReasonCodes)
	} else {
		meta = jsonrpc.DenyData(reason, "", "", nil)
	}
	meta["decision"] = "deny"
	return rpcError(x.id, CodeDenied, "denied by warden: "+reason, x.method.dialect, jsonrpc.NameDenied, meta)
}

// errorInfoType is the google.rpc.ErrorInfo detail the A2A 1.0 JSON-RPC
// binding carries in error.data (a list of typed details).
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// rpcError encodes a JSON-RPC error response. error.data is an object for
// 0.3 clients and a list holding one google.rpc.ErrorInfo for 1.0 clients.
func rpcError(id json.RawMessage, code int, msg string, d dialect, reason string, meta map[string]string) []byte {
	var data any
	if d == dialect10 {
		md := map[string]string{}
		for k, v := range meta {
			md[k] = v
		}
		data = []any{map[string]any{"@type": errorInfoType, "reason": reason, "domain": "warden", "metadata": md}}
	} else if len(meta) > 0 {
		data = meta
	}
	return jsonrpc.ErrorResponse(id, code, msg, data)
}

// idText is a JSON-RPC id as text for the trace (jsonrpc.RawIDText).
func idText(id json.RawMessage) string { return jsonrpc.RawIDText(id) }

// passRequest are the client headers forwarded upstream: the A2A service
// parameters (protocol version, extensions), credentials meant for the
// agent, and trace context. Configured headers are set after and win.
var passRequest = []string{"A2a-Version", "A2a-Extensions", "X-A2a-Extensions", "Authorization", "Traceparent", "Tracestate", "Accept-Language"}

// passResponse are the upstream response headers relayed to the client.
var passResponse = []string{"A2a-Version", "A2a-Extensions", "X-A2a-Extensions"}

// ownHeaders sets the proxy's own headers on a request to the upstream,
// after the client's passRequest and before the configured ones: JSON,
// the client's Accept (default JSON or SSE), and warden's User-Agent.
func ownHeaders(src http.Header) func(http.Header) {
	return func(dst http.Header) {
		dst.Set("Content-Type", "application/json")
		if a := src.Get("Accept"); a != "" {
			dst.Set("Accept", a)
		} else {
			dst.Set("Accept", "application/json, text/event-stream")
		}
		dst.Set("User-Agent", "warden-a2a")
	}
}

func copyResponseHeaders(dst, src http.Header) {
	for _, k := range passResponse {
		for _, v := range src.Values(k) {
			dst.Add(k, v)
		}
	}
}

// selfURL is the proxy's URL for ag, as clients reach it.
func (g *Gate) selfURL(r *http.Request, ag *agent) string {
	if g.opts.PublicURL != "" {
		return g.opts.PublicURL + "/a2a/" + ag.name
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := strings.ToLower(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host + "/a2a/" + ag.name
}
