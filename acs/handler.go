// Package acs is warden's Agent Control Standard (ACS v0.1.0) Guardian:
// JSON-RPC 2.0 over HTTP (POST /acs) and stdio (Content-Length framing),
// the ACS-Core baseline of the standard's conformance.md. Each request is
// validated (envelope and payload, with the spec's error codes and a
// message naming the field), its HMAC-SHA256 signature verified, its
// timestamp and request_id checked against the skew and replay windows,
// then decided by the one decision core (warden.Core) as the catalog
// event its method names; the outcome is answered as an ACS result with
// the five dispositions, appended to the session's ContextEntry chain
// (kept in the store, so a restart or another replica continues it), and
// signed. See docs/acs.md and docs/acs-conformance.md.
package acs

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"runtime/debug"
	"time"

	"github.com/wardenhq/warden/acsstate"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
	"github.com/wardenhq/warden/sigkey"
)

// Defaults of Options.
const (
	DefaultDecisionTimeout = 5 * time.Second
	// toolCacheSize bounds the toolCallRequest → toolCallResult correlation.
	toolCacheSize = 10000
)

// Options configure a Handler.
type Options struct {
	// Sessions keeps the sessions, replay windows and audit chains
	// (required: the SQLite trace implements it).
	Sessions acsstate.Store
	// Keys are the HMAC input keying material by key_id (acs.keys).
	Keys map[string][]byte
	// RequireSignatures refuses unsigned requests (-32004) but system/ping.
	RequireSignatures bool
	// SigningKey (acs.signing_key), when set, signs every answer to a
	// request that reaches a decision or an ACS error after
	// authentication (and answers to signed pings) with ML-DSA-65 or
	// SLH-DSA-128s, instead of HMAC (ACS-Crypto).
	SigningKey *sigkey.PrivateKey
	// PublicKeys verify requests signed with ML-DSA-65 or SLH-DSA-128s,
	// by key_id (acs.public_keys); they need SigningKey.
	PublicKeys map[string]*sigkey.PublicKey
	// RequireProvenance refuses a ClientHello with provenance_producer
	// "none" (-32002).
	RequireProvenance bool
	// SkewWindow (default 5m) and ReplayWindow (default 10m, at least the
	// skew window).
	SkewWindow, ReplayWindow time.Duration
	// DeferMax bounds the deferrals of one session (default 3).
	DeferMax int
	// Approvals says an ask creates an approval someone can decide
	// (ServerHello approver_types_supported: human); ApprovalsURL is the
	// console's base URL for ask_details.approver.endpoint; ApprovalWait
	// is how long a deferral waits for a person (resolution_timeout_ms).
	Approvals    bool
	ApprovalsURL string
	ApprovalWait time.Duration
	// TraceOTel and TraceOCSF say the Guardian exports its decisions as
	// OpenTelemetry spans (otel:) and OCSF events (trace.ocsf_file):
	// ServerHello trace_emission (ACS-Trace, docs/observability.md).
	TraceOTel, TraceOCSF bool
	// Inspect says the store keeps each agent's AgBOM from agbom/snapshot
	// and agbom/changed and serves it (GET /api/agbom): ACS-Inspect and
	// ACS-Inspect-Dynamic.
	Inspect bool
	// DecisionTimeout bounds one decision (ServerHello timeout_config);
	// default 5s.
	DecisionTimeout time.Duration
	// MaxBody, MaxBatch, MaxResponse bound a body, a batch and an answer.
	MaxBody     int64
	MaxBatch    int
	MaxResponse int64
	// Version is warden's version, in the ServerHello and result metadata.
	Version string
	// Logf logs what the answer does not show (nil: log.Printf). Key
	// material and signatures are never logged.
	Logf func(format string, args ...any)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Handler is the ACS Guardian. It is safe for concurrent use.
type Handler struct {
	core   warden.Core
	opts   Options
	signer *Signer
	tools  *jsonrpc.Cache[warden.Tool] // toolCallRequest by request_id, for its result's tool view
}

// NewHandler returns the ACS Guardian deciding with core.
func NewHandler(core warden.Core, opts Options) (*Handler, error) {
	if opts.Sessions == nil {
		return nil, errors.New("acs: a session store is required")
	}
	if opts.RequireSignatures && len(opts.Keys) == 0 && len(opts.PublicKeys) == 0 {
		return nil, errors.New("acs: signatures are required but no key is configured (acs.keys or acs.public_keys)")
	}
	if len(opts.PublicKeys) > 0 && opts.SigningKey == nil {
		return nil, errors.New("acs: acs.public_keys needs acs.signing_key: the answers to requests signed with a public key are signed with warden's own key")
	}
	if opts.SkewWindow <= 0 {
		opts.SkewWindow = acsstate.DefaultSkew
	}
	if opts.ReplayWindow <= 0 {
		opts.ReplayWindow = acsstate.DefaultReplay
	}
	if opts.ReplayWindow < opts.SkewWindow {
		opts.ReplayWindow = opts.SkewWindow
	}
	if opts.DeferMax <= 0 {
		opts.DeferMax = acsstate.DefaultDeferMax
	}
	if opts.DecisionTimeout <= 0 {
		opts.DecisionTimeout = DefaultDecisionTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = jsonrpc.DefaultMaxBody
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = jsonrpc.DefaultMaxBatch
	}
	if opts.MaxResponse <= 0 {
		opts.MaxResponse = jsonrpc.DefaultMaxResponse
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{core: core, opts: opts, signer: NewSigner(opts.Keys).withCrypto(opts.SigningKey, opts.PublicKeys), tools: jsonrpc.NewCache[warden.Tool](toolCacheSize)}, nil
}

// Handle answers a body — one request or a batch — received over
// transport ("http", "https" or "stdio"), and returns the answer's bytes.
// Every request has an answer (ACS v0.1.0 has no notifications).
func (h *Handler) Handle(ctx context.Context, body []byte, transport string) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			h.opts.Logf("acs: panic handling a body: %v\n%s", r, debug.Stack())
			resp = encode(errorMessage(nil, errf(CodeInternal, "", "internal error")))
		}
	}()
	if err := jsonstrict.Check(body); err != nil {
		if errors.Is(err, jsonstrict.ErrSyntax) {
			return encode(errorMessage(nil, errf(CodeParseError, "", "the body is not valid JSON")))
		}
		return encode(errorMessage(nil, errf(CodeInvalidRequest, "", "%v", err)))
	}
	items, batch, err := jsonrpc.Split(body, h.opts.MaxBatch)
	var over *jsonrpc.BatchLimitError
	switch {
	case errors.As(err, &over):
		return encode(errorMessage(nil, errf(CodeInvalidRequest, "", "a batch exceeds the limit of %d requests (limits.batch)", h.opts.MaxBatch).
			with("limit", h.opts.MaxBatch)))
	case err != nil:
		return encode(errorMessage(nil, errf(CodeParseError, "", "the body is not valid JSON")))
	case !batch:
		return h.encodeLimited(h.serve(ctx, items[0], transport), 1)
	case len(items) == 0:
		return encode(errorMessage(nil, errf(CodeInvalidRequest, "", "an empty batch")))
	}
	out := make([]byte, 0, 512*len(items))
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, encode(h.serve(ctx, it, transport))...)
		if int64(len(out)) > h.opts.MaxResponse {
			return encode(errorMessage(nil, errf(CodeInvalidRequest, "", "the answers exceed the limit of %d bytes (limits.response_bytes); the first %d of %d requests were processed, the rest were not",
				h.opts.MaxResponse, i+1, len(items)).with("decided", i+1)))
		}
	}
	return append(out, ']')
}

func (h *Handler) encodeLimited(msg map[string]any, n int) []byte {
	b := encode(msg)
	if int64(len(b)) > h.opts.MaxResponse {
		id, _ := msg["id"].(json.RawMessage)
		return encode(errorMessage(id, errf(CodeInvalidRequest, "", "the answer exceeds the limit of %d bytes (limits.response_bytes); the request was processed", h.opts.MaxResponse)))
	}
	return b
}

// serve answers one request.
func (h *Handler) serve(ctx context.Context, raw []byte, transport string) (msg map[string]any) {
	r, e := decodeMessage(raw)
	var id json.RawMessage
	if r != nil {
		id = r.idRaw
	}
	defer func() {
		if p := recover(); p != nil {
			h.opts.Logf("acs: panic serving a request: %v\n%s", p, debug.Stack())
			msg = errorMessage(id, errf(CodeInternal, "", "internal error"))
		}
	}()
	if e != nil {
		return errorMessage(id, e)
	}
	var ok bool
	if r.event, ok = resolveMethod(r.method); !ok {
		return errorMessage(id, errf(CodeMethodNotFound, "method", "%q is not an ACS v0.1.0 method warden serves", clip(r.method)).with("method", r.method))
	}
	if e := r.checkEnvelope(); e != nil {
		if r.event == MethodPing && e.Code >= -32099 && e.Code <= -32000 {
			e = &Error{Code: CodeInvalidParams, Message: e.Message, Data: e.Data} // system/ping never gets an ACS error (§13)
			e.Data["reason"] = errorNames[CodeInvalidParams]
		}
		return errorMessage(id, e)
	}
	if e := checkPayload(r.event, r.payload); e != nil {
		return errorMessage(id, e)
	}
	if r.event == MethodPing {
		return h.ping(r, id)
	}
	// Authenticate before anything is remembered: an unsigned request
	// must not burn a request_id or touch a session.
	keyID := ""
	switch {
	case r.sig != nil:
		if e := h.signer.verify(r); e != nil {
			return errorMessage(id, e)
		}
		keyID = r.sig.KeyID
	case h.opts.RequireSignatures:
		return errorMessage(id, errf(CodeSignatureInvalid, "params.signature", "required: every request but system/ping is signed (acs.require_signatures)"))
	}
	reply := func(result map[string]any, e *Error) map[string]any {
		var m map[string]any
		member := "result"
		if e != nil {
			m, member = errorMessage(id, e), "error"
		} else {
			m = jsonrpc.ResultObject(id, result)
		}
		if keyID != "" || h.signer.signsAll() {
			if err := h.signer.sign(keyID, r.sessionID, m, member); err != nil {
				h.opts.Logf("acs: signing the answer to %s %s: %v", r.method, r.requestID, err)
				return errorMessage(id, errf(CodeInternal, "", "the answer could not be signed"))
			}
		}
		return m
	}
	now := h.opts.Now()
	if d := now.Sub(r.timestamp); d > h.opts.SkewWindow || d < -h.opts.SkewWindow {
		return reply(nil, errf(CodeTimestampOutOfWindow, "params.timestamp", "%s is %s from warden's clock, outside the skew window of %s",
			r.timestamp.UTC().Format(time.RFC3339Nano), absDur(d).Round(time.Millisecond), h.opts.SkewWindow).
			with("skew_window_ms", h.opts.SkewWindow.Milliseconds()))
	}
	if r.event == MethodHello {
		return reply(h.hello(ctx, r, transport))
	}
	return reply(h.step(ctx, r, keyID))
}

// step answers a hook, a wrapped MCP message or an AgBOM method of a
// negotiated session.
func (h *Handler) step(ctx context.Context, r *request, keyID string) (map[string]any, *Error) {
	s, err := h.opts.Sessions.ACSSession(ctx, r.sessionID)
	if errors.Is(err, acsstate.ErrNoSession) {
		return nil, errf(CodeCapabilityNotNegotiated, "params.metadata.session_id", "no handshake/hello for session %s: negotiate the session first", clip(r.sessionID)).
			with("method", r.method)
	}
	if err != nil {
		return nil, errf(CodeInternal, "", "reading the session: %v", err)
	}
	if e := sameParty(s, r, warden.PrincipalFrom(ctx).Tenant, keyID); e != nil {
		return nil, e
	}
	if !negotiated(s, r.method) && !negotiated(s, r.event) {
		return nil, errf(CodeCapabilityNotNegotiated, "method", "%s was not negotiated for this session (handshake methods_implemented)", r.method).
			with("method", r.method)
	}
	if strictProvenance(s) {
		if e := checkProvenance(r.event, r.payload, true); e != nil {
			return nil, e
		}
	}
	if e := h.remember(ctx, r); e != nil {
		return nil, e
	}
	if r.clientChain != "" && r.clientChain != s.Head {
		return nil, errf(CodeChainMismatch, "params.metadata.session_state.chain_hash", "the session's chain head is %s, not %s", orNone(s.Head), r.clientChain).
			with("chain_hash", s.Head)
	}
	ev := h.event(r)
	dctx, cancel := context.WithTimeout(ctx, h.opts.DecisionTimeout)
	out, derr := h.core.Decide(dctx, ev)
	cancel()
	if derr != nil {
		h.opts.Logf("acs: %s %s: %v", r.method, r.requestID, derr) // the outcome is the deny Decide returns
	}
	if r.event == catalog.MethodToolCallRequest && out.Verdict != warden.Deny {
		h.tools.Put(r.requestID, ev.Tool)
	}
	res, decision := h.result(ctx, r, s, &out)
	head, err := appendEntry(context.WithoutCancel(ctx), h.opts.Sessions, r, s.Head, decision, out.RecordID, h.opts.Now())
	if err != nil {
		h.opts.Logf("acs: %s %s: appending to the session's chain: %v", r.method, r.requestID, err)
		return nil, errf(CodeInternal, "", "the step was decided (%s) but could not be written to the session's audit chain", decision)
	}
	res["chain_hash"] = head
	if r.event == catalog.MethodSessionEnd {
		if err := h.opts.Sessions.EndACSSession(context.WithoutCancel(ctx), r.sessionID, h.opts.Now()); err != nil {
			h.opts.Logf("acs: ending session %s: %v", r.sessionID, err)
		}
	}
	return res, nil
}

// remember checks the request_id (and nonce) against the session's replay
// window, across restarts and replicas (the store keeps them).
func (h *Handler) remember(ctx context.Context, r *request) *Error {
	now := h.opts.Now()
	keys := []string{r.requestID}
	if r.nonce != "" {
		keys = append(keys, "nonce:"+r.nonce)
	}
	for i, k := range keys {
		err := h.opts.Sessions.RememberRequest(ctx, r.sessionID, k, now, h.opts.ReplayWindow)
		if errors.Is(err, acsstate.ErrReplay) {
			field := "params.request_id"
			if i > 0 {
				field = "params.nonce"
			}
			return errf(CodeReplayDetected, field, "seen before in session %s within the replay window of %s", clip(r.sessionID), h.opts.ReplayWindow)
		}
		if err != nil {
			return errf(CodeInternal, "", "checking the replay window: %v", err)
		}
	}
	return nil
}

// event is the catalog event of a step: the payload decided as sent, the
// metadata as its context.
func (h *Handler) event(r *request) *warden.Event {
	ev := &warden.Event{Name: r.event, Surface: warden.SurfaceACS, RequestID: r.requestID, Payload: r.payload, Raw: r.payloadRaw}
	ev.Envelope.Context = r.metadata
	if r.event == catalog.MethodToolCallResult {
		if ref, _ := r.payload["request_id_ref"].(string); ref != "" {
			if t, ok := h.tools.Get(ref); ok {
				ev.Envelope.Answers = &t
			}
		}
	}
	return ev
}

// ping answers system/ping: always allow, never an ACS error, not in the
// chain; signed when the ping carried a signature that verifies.
func (h *Handler) ping(r *request, id json.RawMessage) map[string]any {
	echo, _ := r.payload["echo"].(string)
	res := map[string]any{"type": "final", "acs_version": Version, "request_id": r.requestID, "decision": "allow",
		"payload": map[string]any{"status": "ok", "echo": echo, "server_timestamp": h.opts.Now().UTC().Format(time.RFC3339Nano)}}
	m := jsonrpc.ResultObject(id, res)
	if r.sig != nil && h.signer.verify(r) == nil {
		if err := h.signer.sign(r.sig.KeyID, r.sessionID, m, "result"); err != nil {
			delete(res, "signature")
		}
	}
	return m
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func orNone(s string) string {
	if s == "" {
		return "empty (no entry yet)"
	}
	return s
}
