// Package acsclient is an OWASP Agent Control Standard (ACS v0.1.0)
// Observed-Agent client for tests: it builds, signs and sends ACS requests
// over HTTP or stdio and checks the Guardian's answers (signature, request
// correlation, the fields each disposition requires) and audit chains.
//
// It is written from the specification (shared/acs), docs/acs.md and the Go
// reference Guardian's documented choices, independently of warden's own ACS
// implementation, so that tests can use it as a second opinion; only the
// RFC 8785 encoder is shared (internal/canon, whose tests hold it to an
// independent implementation). Requests can be tampered with before or
// after signing (see the With… options and Envelope) to exercise a
// Guardian's refusals.
//
// The signature scheme is docs/acs.md's: a per-session key
// HKDF-SHA256(IKM = Options.Key, no salt, info = UTF-8 session_id, 32 bytes);
// the signed bytes are the RFC 8785 (JCS) form of the whole JSON-RPC message
// without its signature member (params.signature in a request,
// result.signature in a result, error.signature in an error); the signature
// object is {"algorithm":"HMAC-SHA256","value":<padded std base64>,"key_id"}.
// With Options.SignKey and GuardianKeys it signs and verifies ACS-Crypto's
// ML-DSA-65 and SLH-DSA-128s signatures instead, with cloudflare/circl
// (pq.go).
package acsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/cloudflare/circl/sign"
	"github.com/google/uuid"
)

// Version is the ACS wire version this client speaks.
const Version = "0.1.0"

// DefaultAgentID is the agent_id of a client whose Options name none.
const DefaultAgentID = "acsclient"

// Options configures a Client.
type Options struct {
	// URL is the Guardian's HTTP endpoint, e.g. http://127.0.0.1:PORT/acs
	// (New only).
	URL string
	// HTTPClient sends the requests (New only); nil means http.DefaultClient.
	HTTPClient *http.Client
	// Token, when set, is sent as "Authorization: Bearer <Token>" (New only).
	Token string
	// KeyID names Key in each signature's key_id.
	KeyID string
	// Key is the input keying material; nil leaves requests unsigned.
	Key []byte
	// SignKey, when set, signs each request with ML-DSA-65 or
	// SLH-DSA-128s (ACS-Crypto, pq.go) under KeyID instead of HMAC.
	SignKey sign.PrivateKey
	// GuardianKeys verify the Guardian's ML-DSA-65 or SLH-DSA-128s
	// signatures on its answers, by key_id; with any set, every answer
	// but an unauthenticated error must carry one.
	GuardianKeys map[string]sign.PublicKey
	// AgentID is metadata.agent_id; "" means DefaultAgentID.
	AgentID string
	// SessionID is metadata.session_id, a UUID; "" means a new random one.
	SessionID string
	// Now is the clock for request timestamps; nil means time.Now.
	Now func() time.Time
}

// Client is an ACS Observed Agent for one session. It is safe for concurrent
// use (a stdio transport serializes the calls).
type Client struct {
	t         Transport
	keyID     string
	key       []byte
	signKey   sign.PrivateKey
	guardian  map[string]sign.PublicKey
	agentID   string
	sessionID string
	now       func() time.Time

	mu     sync.Mutex
	turnID string
}

// New returns a client speaking HTTP to opts.URL.
func New(opts Options) *Client {
	return NewWithTransport(&HTTPTransport{URL: opts.URL, Client: opts.HTTPClient, Token: opts.Token}, opts)
}

// NewStdio returns a client that writes framed requests to w and reads framed
// answers from r (see StdioTransport); opts.URL, HTTPClient and Token are
// unused.
func NewStdio(r io.Reader, w io.Writer, opts Options) *Client {
	return NewWithTransport(NewStdioTransport(r, w), opts)
}

// NewWithTransport returns a client speaking over t.
func NewWithTransport(t Transport, opts Options) *Client {
	c := &Client{t: t, keyID: opts.KeyID, key: opts.Key, signKey: opts.SignKey, guardian: opts.GuardianKeys, agentID: opts.AgentID, sessionID: opts.SessionID, now: opts.Now}
	if c.agentID == "" {
		c.agentID = DefaultAgentID
	}
	if c.sessionID == "" {
		c.sessionID = uuid.NewString()
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// SessionID is the client's session_id.
func (c *Client) SessionID() string { return c.sessionID }

// AgentID is the client's agent_id.
func (c *Client) AgentID() string { return c.agentID }

// Transport is the client's transport.
func (c *Client) Transport() Transport { return c.t }

// SetTurnID sets the metadata.turn_id of the requests built from now on; ""
// stops sending one.
func (c *Client) SetTurnID(id string) {
	c.mu.Lock()
	c.turnID = id
	c.mu.Unlock()
}

// Close closes the transport when it is an io.Closer (a stdio transport
// closes its writer).
func (c *Client) Close() error {
	if cl, ok := c.t.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Envelope is one JSON-RPC request being built. Request fills it, applies
// the mods and then signs it, so a mod changes what is signed; a change made
// to the Envelope after Request returns is sent as is, under the old
// signature, unless Sign is called again.
type Envelope struct {
	// JSONRPC is the "jsonrpc" member; "" omits it.
	JSONRPC string
	// ID is the JSON-RPC id (a UUID string by default); nil omits it.
	ID any
	// Method is the "method" member; "" omits it.
	Method string
	// Params is the ACS envelope: acs_version, request_id, timestamp,
	// metadata, payload, and signature once signed (nonce etc. when set).
	// nil omits it.
	Params map[string]any
	// KeyID and Key sign the request (the client's by default); a nil Key
	// leaves it unsigned.
	KeyID string
	Key   []byte
	// SignKey, when set, signs with ML-DSA-65 or SLH-DSA-128s instead
	// (the client's by default).
	SignKey sign.PrivateKey
	// NoSign leaves the request unsigned even with a Key.
	NoSign bool

	err error
}

// Request builds a request for method with payload (nil means {}): a UUID
// JSON-RPC id and request_id, the current time in RFC 3339 UTC with
// nanoseconds, metadata {agent_id, session_id[, turn_id]}. The mods run in
// order, then the request is signed unless it has no Key or NoSign is set. A
// signing failure is kept and returned by Send.
func (c *Client) Request(method string, payload any, mods ...func(*Envelope)) *Envelope {
	if payload == nil {
		payload = map[string]any{}
	}
	md := map[string]any{"agent_id": c.agentID, "session_id": c.sessionID}
	c.mu.Lock()
	if c.turnID != "" {
		md["turn_id"] = c.turnID
	}
	c.mu.Unlock()
	e := &Envelope{
		JSONRPC: "2.0",
		ID:      uuid.NewString(),
		Method:  method,
		Params: map[string]any{
			"acs_version": Version,
			"request_id":  uuid.NewString(),
			"timestamp":   c.now().UTC().Format(time.RFC3339Nano),
			"metadata":    md,
			"payload":     payload,
		},
		KeyID:   c.keyID,
		Key:     c.key,
		SignKey: c.signKey,
	}
	for _, m := range mods {
		m(e)
	}
	if !e.NoSign && (e.Key != nil || e.SignKey != nil) {
		e.err = e.Sign()
	}
	return e
}

// Message is the JSON-RPC message e encodes to, as a map sharing e.Params.
func (e *Envelope) Message() map[string]any {
	m := map[string]any{}
	if e.JSONRPC != "" {
		m["jsonrpc"] = e.JSONRPC
	}
	if e.ID != nil {
		m["id"] = e.ID
	}
	if e.Method != "" {
		m["method"] = e.Method
	}
	if e.Params != nil {
		m["params"] = e.Params
	}
	return m
}

// MarshalJSON encodes e.Message().
func (e *Envelope) MarshalJSON() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return json.Marshal(e.Message())
}

// Err is the error building or signing e, if any.
func (e *Envelope) Err() error { return e.err }

// Sign (re)computes params.signature over e's current content with e.Key and
// e.KeyID, keyed for the session named in metadata.session_id.
func (e *Envelope) Sign() error {
	if e.Key == nil && e.SignKey == nil {
		return errors.New("acsclient: sign: no key")
	}
	if e.Params == nil {
		return errors.New("acsclient: sign: no params")
	}
	delete(e.Params, "signature")
	if e.SignKey != nil {
		return SignPublic(e.Message(), "params", e.SignKey, e.KeyID)
	}
	return Sign(e.Message(), "params", e.Key, e.KeyID, e.SessionID())
}

// Metadata is params.metadata, created when absent.
func (e *Envelope) Metadata() map[string]any {
	if e.Params == nil {
		e.Params = map[string]any{}
	}
	md, ok := e.Params["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		e.Params["metadata"] = md
	}
	return md
}

// RequestID is params.request_id ("" when it is not a string).
func (e *Envelope) RequestID() string {
	s, _ := e.Params["request_id"].(string)
	return s
}

// SessionID is params.metadata.session_id ("" when it is not a string).
func (e *Envelope) SessionID() string {
	md, _ := e.Params["metadata"].(map[string]any)
	s, _ := md["session_id"].(string)
	return s
}

// Signed reports whether e carries params.signature.
func (e *Envelope) Signed() bool {
	_, ok := e.Params["signature"]
	return ok
}

// Unsigned is a mod that leaves the request unsigned.
func Unsigned(e *Envelope) { e.NoSign = true }

// WithParam sets params[key] (before signing).
func WithParam(key string, v any) func(*Envelope) {
	return func(e *Envelope) {
		if e.Params == nil {
			e.Params = map[string]any{}
		}
		e.Params[key] = v
	}
}

// WithoutParam deletes params[key] (before signing).
func WithoutParam(key string) func(*Envelope) {
	return func(e *Envelope) { delete(e.Params, key) }
}

// WithMetadata sets params.metadata[key].
func WithMetadata(key string, v any) func(*Envelope) {
	return func(e *Envelope) { e.Metadata()[key] = v }
}

// WithTimestamp sets params.timestamp to t in RFC 3339 UTC with nanoseconds.
func WithTimestamp(t time.Time) func(*Envelope) {
	return WithParam("timestamp", t.UTC().Format(time.RFC3339Nano))
}

// WithRequestID sets params.request_id (to replay one, pass an earlier
// request's RequestID()).
func WithRequestID(id string) func(*Envelope) { return WithParam("request_id", id) }

// WithNonce sets params.nonce.
func WithNonce(n string) func(*Envelope) { return WithParam("nonce", n) }

// WithTurnID sets metadata.turn_id.
func WithTurnID(id string) func(*Envelope) { return WithMetadata("turn_id", id) }

// WithSession sets metadata.session_id; the request is then signed with that
// session's key.
func WithSession(id string) func(*Envelope) { return WithMetadata("session_id", id) }

// WithChainHash sets metadata.session_state.chain_hash, the Observed Agent's
// view of the chain head for the Guardian to cross-check (§8.6).
func WithChainHash(h string) func(*Envelope) {
	return func(e *Envelope) {
		md := e.Metadata()
		ss, ok := md["session_state"].(map[string]any)
		if !ok {
			ss = map[string]any{}
			md["session_state"] = ss
		}
		ss["chain_hash"] = h
	}
}

// WithID sets the JSON-RPC id.
func WithID(id any) func(*Envelope) { return func(e *Envelope) { e.ID = id } }

// WithKey signs with keyID and key instead of the client's.
func WithKey(keyID string, key []byte) func(*Envelope) {
	return func(e *Envelope) { e.KeyID, e.Key = keyID, key }
}

// Response is one JSON-RPC answer.
type Response struct {
	// Raw is the answer's bytes (for a batch, this element's).
	Raw []byte
	// HTTPStatus is the HTTP status code (0 on stdio).
	HTTPStatus int
	// Msg is the whole message, decoded with json.Number numbers.
	Msg    map[string]any
	ID     any
	Result map[string]any
	Error  *Error
	// Request is the envelope this answers, when known.
	Request *Envelope
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int
	Message string
	Data    any
}

func (e *Error) Error() string { return fmt.Sprintf("ACS error %d: %s", e.Code, e.Message) }

// Decision is result.decision ("" for an error or none).
func (r *Response) Decision() string { s, _ := r.Result["decision"].(string); return s }

// Reasoning is result.reasoning.
func (r *Response) Reasoning() string { s, _ := r.Result["reasoning"].(string); return s }

// ChainHash is result.chain_hash.
func (r *Response) ChainHash() string { s, _ := r.Result["chain_hash"].(string); return s }

// ReasonCodes is result.reason_codes.
func (r *Response) ReasonCodes() []string {
	l, _ := r.Result["reason_codes"].([]any)
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// ErrorCode is error.code, or 0 for a result.
func (r *Response) ErrorCode() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// ParseResponse decodes one JSON-RPC response object.
func ParseResponse(b []byte) (*Response, error) {
	m, err := DecodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("acsclient: answer %.200q: %w", b, err)
	}
	r := &Response{Raw: b, Msg: m, ID: m["id"]}
	if v, ok := m["result"]; ok {
		if r.Result, ok = v.(map[string]any); !ok {
			return nil, fmt.Errorf("acsclient: result is a %T, not an object: %.200s", v, b)
		}
	}
	if v, ok := m["error"]; ok {
		em, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("acsclient: error is a %T, not an object: %.200s", v, b)
		}
		num, ok := em["code"].(json.Number)
		code, err := num.Int64()
		if !ok || err != nil {
			return nil, fmt.Errorf("acsclient: error.code %v is not an integer: %.200s", em["code"], b)
		}
		msg, _ := em["message"].(string)
		r.Error = &Error{Code: int(code), Message: msg, Data: em["data"]}
	}
	if r.Result == nil && r.Error == nil {
		return nil, fmt.Errorf("acsclient: answer has neither result nor error: %.200s", b)
	}
	return r, nil
}

// SendRaw sends body as is and returns the answer's bytes. A non-2xx HTTP
// status is a *StatusError, returned with the body.
func (c *Client) SendRaw(ctx context.Context, body []byte) ([]byte, error) {
	reply, _, err := c.t.RoundTrip(ctx, body)
	return reply, err
}

// Send sends e and decodes the answer, which must be a single JSON-RPC
// response. A non-2xx HTTP status whose body is a JSON-RPC response is
// returned as that response (see Response.HTTPStatus), not as an error.
func (c *Client) Send(ctx context.Context, e *Envelope) (*Response, error) {
	if e.err != nil {
		return nil, e.err
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	reply, status, err := c.t.RoundTrip(ctx, body)
	var se *StatusError
	if err != nil && !errors.As(err, &se) {
		return nil, err
	}
	r, perr := ParseResponse(reply)
	if perr != nil {
		if se != nil {
			return nil, se
		}
		return nil, perr
	}
	r.HTTPStatus = status
	r.Request = e
	return r, nil
}

// Call is Send(ctx, Request(method, payload, mods...)).
func (c *Client) Call(ctx context.Context, method string, payload any, mods ...func(*Envelope)) (*Response, error) {
	return c.Send(ctx, c.Request(method, payload, mods...))
}

// Batch sends envs as one JSON-RPC batch. The answers come back in the order
// of envs, matched by id (a nil entry where none answered that id); an
// answer whose id matches no request is an error. A Guardian without
// batching answers a single error object (-32600); Batch then returns that
// one response.
func (c *Client) Batch(ctx context.Context, envs ...*Envelope) ([]*Response, error) {
	body, err := json.Marshal(envs)
	if err != nil {
		return nil, err
	}
	reply, status, err := c.t.RoundTrip(ctx, body)
	var se *StatusError
	if err != nil && !errors.As(err, &se) {
		return nil, err
	}
	trimmed := bytes.TrimSpace(reply)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		r, err := ParseResponse(reply)
		if err != nil {
			return nil, err
		}
		r.HTTPStatus = status
		return []*Response{r}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(reply, &elems); err != nil {
		if se != nil {
			return nil, se
		}
		return nil, fmt.Errorf("acsclient: batch answer %.200q: %w", reply, err)
	}
	out := make([]*Response, len(envs))
	var errs []error
	for _, raw := range elems {
		r, err := ParseResponse(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.HTTPStatus = status
		i := indexOfID(envs, r.ID)
		if i < 0 || out[i] != nil {
			errs = append(errs, fmt.Errorf("acsclient: batch answer with id %v matches no request (or a second time)", r.ID))
			continue
		}
		r.Request = envs[i]
		out[i] = r
	}
	return out, errors.Join(errs...)
}

func indexOfID(envs []*Envelope, id any) int {
	for i, e := range envs {
		if e.ID != nil && sameJSON(e.ID, id) {
			return i
		}
	}
	return -1
}

// sameJSON reports whether a and b encode to the same canonical JSON.
func sameJSON(a, b any) bool {
	ca, err1 := Canonical(a)
	cb, err2 := Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// ClientHello is the ClientHello payload Handshake sends:
// acs_versions_supported ["0.1.0"], methods_implemented methods,
// transports_supported [the transport's name], provenance_producer "none",
// profiles_supported ["acs-core","acs-audit"].
func (c *Client) ClientHello(methods []string) map[string]any {
	if methods == nil {
		methods = []string{}
	}
	return map[string]any{
		"acs_versions_supported": []string{Version},
		"methods_implemented":    methods,
		"transports_supported":   []string{c.t.Name()},
		"provenance_producer":    "none",
		"profiles_supported":     []string{"acs-core", "acs-audit"},
	}
}

// Handshake sends handshake/hello with ClientHello(methods).
func (c *Client) Handshake(ctx context.Context, methods []string, mods ...func(*Envelope)) (*Response, error) {
	return c.Call(ctx, "handshake/hello", c.ClientHello(methods), mods...)
}

// Ping sends an unsigned system/ping with payload {"echo": echo}.
func (c *Client) Ping(ctx context.Context, echo string, mods ...func(*Envelope)) (*Response, error) {
	return c.Call(ctx, "system/ping", map[string]any{"echo": echo}, append([]func(*Envelope){Unsigned}, mods...)...)
}
