// Package aos is warden's AOS Guardian endpoint: JSON-RPC 2.0 over HTTP
// (POST /aos) as the OWASP Agent Observability Standard defines it. It
// decodes every AOS method — the steps/* methods, protocols/MCP,
// protocols/A2A, the A2A hooks and ping — in each shape the spec and the
// seeds show, into a warden.Event, asks a pipeline.Pipeline, and answers the
// Outcome as an AOS success result (allow, deny or modify, the latter with
// the whole modified request).
//
// The body is parsed once by a single-pass parser that keeps the raw text of
// the id and of the payload (so ids are echoed exactly and the trace stores
// the payload as sent); see BenchmarkDecode. Each object's map and each
// array are made once, at their size; strings, numbers and arrays are
// boxed from slabs (jsonstrict/box.go); the parser's scratch and the response buffers
// are pooled. BenchmarkServeHTTP counts the allocations of one HTTP
// decision: those left are the params' maps (two each), the body, the
// event, the slabs and the headers.
package aos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
)

// cacheSize bounds each correlation cache: a result whose request is more
// than this many requests old gets an empty tool view.
const cacheSize = 10000

// Options configure a Handler. The zero value is usable.
type Options struct {
	// MaxBody limits the request body in bytes; 0 means jsonrpc.DefaultMaxBody.
	MaxBody int64
	// MaxBatch limits the entries of a batch (limits.batch); 0 means
	// jsonrpc.DefaultMaxBatch. A larger batch is refused whole (-32600) while it
	// is parsed, before any entry is decided.
	MaxBatch int
	// MaxResponse limits the response body in bytes (limits.response_bytes);
	// 0 means jsonrpc.DefaultMaxResponse. A batch whose answers grow past it stops
	// deciding and is answered with one -32600 error instead.
	MaxResponse int64
	// Version is the guardian version ping answers; "" means "dev".
	Version string
	// Logf logs failures that the answer does not show in full (a decision
	// that could not be recorded, a recovered panic); nil means log.Printf.
	Logf func(format string, args ...any)
}

// Handler is the AOS Guardian endpoint. It is safe for concurrent use; it
// remembers recent tool calls (steps/toolCallRequest by executionId, MCP
// tools/call by id, 10,000 of each) to give their results a tool view.
type Handler struct {
	d     warden.Core
	opts  Options
	tools *jsonrpc.Cache[warden.Tool] // steps/toolCallRequest by executionId
	mcp   *jsonrpc.Cache[warden.Tool] // MCP tools/call by id
	now   func() time.Time
}

// NewHandler returns the endpoint deciding with d.
func NewHandler(d warden.Core, opts Options) *Handler {
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
	h := &Handler{d: d, opts: opts, tools: jsonrpc.NewCache[warden.Tool](cacheSize), mcp: jsonrpc.NewCache[warden.Tool](cacheSize), now: time.Now}
	return h
}

// ServeHTTP serves POST /aos. JSON-RPC errors are answered with HTTP 200; a
// notification (or a batch of them) gets 204 and no body; other HTTP methods
// get 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		jsonrpc.WriteJSON(w, http.StatusMethodNotAllowed, jsonrpc.AppendError(nil, nil,
			invalidRequest("HTTP method %s not allowed: use POST", r.Method)))
		return
	}
	body, err := readBody(w, r, h.opts.MaxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		e := &Error{Code: CodeParseError, Message: "parse error: reading body: " + err.Error()}
		if errors.As(err, &tooBig) {
			e = invalidRequest("body exceeds the limit of %d bytes%s", h.opts.MaxBody, mib(h.opts.MaxBody))
			e.Data = map[string]any{"limit": h.opts.MaxBody}
		}
		jsonrpc.WriteJSON(w, http.StatusOK, jsonrpc.AppendError(nil, nil, e))
		return
	}
	buf := respPool.Get().(*[]byte)
	resp := h.handle(r.Context(), body, (*buf)[:0])
	if resp == nil {
		respPool.Put(buf)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	jsonrpc.WriteJSON(w, http.StatusOK, resp)
	if cap(resp) <= maxPooledResponse { // Write does not keep resp (io.Writer)
		*buf = resp[:0]
	}
	respPool.Put(buf)
}

// maxPooledResponse bounds the capacity of a response buffer respPool
// keeps: one grown past it on a large answer is left to the garbage
// collector.
const maxPooledResponse = 64 << 10

// respPool holds the buffers ServeHTTP builds responses in (*[]byte).
var respPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// mib renders a limit that is a whole number of MiB, e.g. " (4 MiB)".
func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf(" (%d MiB)", n>>20)
	}
	return ""
}

// readBody reads the whole body, at most max bytes, sizing the buffer from
// Content-Length when it is known.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, max)
	n := int64(512)
	if cl := r.ContentLength; cl > 0 && cl <= max {
		n = cl + 1
	}
	b := make([]byte, 0, n)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Handle answers a JSON-RPC body — one request or a batch — and returns the
// response body, or nil when nothing is to be answered (notifications). It
// is ServeHTTP without HTTP, for `warden eval --event aos` and tests. body
// must not be changed while the call runs.
func (h *Handler) Handle(ctx context.Context, body []byte) []byte {
	return h.handle(ctx, body, nil)
}

// handle is Handle building the response in buf (when it fits, else in a
// new slice; nil buf is fine).
func (h *Handler) handle(ctx context.Context, body, buf []byte) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			h.opts.Logf("aos: panic handling a body: %v\n%s", r, debug.Stack())
			resp = jsonrpc.AppendError(nil, nil, &Error{Code: CodeInternalError, Message: "internal error"})
		}
	}()
	st := newParseState()
	defer st.release()
	calls, batch, err := st.parseBody(body, h.opts.MaxBatch)
	if err != nil {
		return parseFailure(err)
	}
	if batch && len(calls) == 0 {
		return jsonrpc.AppendError(nil, nil, invalidRequest("empty batch"))
	}
	if !batch {
		if buf == nil {
			buf = make([]byte, 0, 512)
		}
		b, ok := h.serve(ctx, calls[0], buf)
		if !ok {
			return nil
		}
		if int64(len(b)) > h.opts.MaxResponse {
			return h.tooLarge(calls[0].idRaw, 1, 1)
		}
		return b
	}
	if cap(buf) < 512*len(calls) {
		buf = make([]byte, 0, 512*len(calls))
	}
	b := append(buf, '[')
	n := 0
	for i, c := range calls {
		if int64(len(b)) > h.opts.MaxResponse {
			return h.tooLarge(nil, i, len(calls))
		}
		mark := len(b)
		if n > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = h.serve(ctx, c, b); ok {
			n++
		} else {
			b = b[:mark]
		}
	}
	if n == 0 {
		return nil
	}
	if int64(len(b))+1 > h.opts.MaxResponse {
		return h.tooLarge(nil, len(calls), len(calls))
	}
	return append(b, ']')
}

// parseFailure is the answer to a body that could not be parsed.
func parseFailure(err error) []byte {
	var amb *jsonstrict.Error
	if errors.As(err, &amb) {
		return jsonrpc.AppendError(nil, nil, invalidRequest("%s", amb.Error()))
	}
	var over *jsonrpc.BatchLimitError
	if errors.As(err, &over) {
		e := &Error{Code: CodeInvalidRequest, Message: over.Error(), Data: map[string]any{"limit": over.Limit, "name": "limits.batch"}}
		return jsonrpc.AppendError(nil, nil, e)
	}
	return jsonrpc.AppendError(nil, nil, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()})
}

// tooLarge is the answer to a body whose response grew past MaxResponse:
// one error, the response built so far dropped. The first decided entries
// were decided and recorded; the rest were not decided.
func (h *Handler) tooLarge(id []byte, decided, total int) []byte {
	e := invalidRequest("the response exceeds the limit of %d bytes%s (limits.response_bytes); the first %d of %d requests were processed (decided and recorded), the rest were not: send fewer or smaller requests",
		h.opts.MaxResponse, mib(h.opts.MaxResponse), decided, total)
	e.Data = map[string]any{"limit": h.opts.MaxResponse, "name": "limits.response_bytes", "decided": decided}
	return jsonrpc.AppendError(nil, id, e)
}

// serve answers one request, appending its response to b; ok is false when
// it has no response (a notification). A panic is answered as an internal
// error: no input crashes the server.
func (h *Handler) serve(ctx context.Context, c *call, b []byte) (out []byte, ok bool) {
	mark := len(b)
	defer func() {
		if r := recover(); r != nil {
			h.opts.Logf("aos: panic serving a request: %v\n%s", r, debug.Stack())
			out, ok = jsonrpc.AppendError(b[:mark], c.idRaw, &Error{Code: CodeInternalError, Message: "internal error"}), true
		}
	}()
	method, params, rerr := c.check()
	if rerr != nil { // invalid requests are answered even without an id
		return jsonrpc.AppendError(b, c.idRaw, rerr), true
	}
	if method == MethodPing {
		return appendPing(b, c.idRaw, h.opts.Version, h.now()), c.hasID
	}
	ev, sh, rerr := h.decodeEvent(c, method, params)
	if rerr != nil {
		return jsonrpc.AppendError(b, c.idRaw, rerr), c.hasID
	}
	h.answers(ev)
	o, err := h.d.Decide(ctx, ev)
	h.remember(ev)
	if err != nil {
		// The outcome is the deny Decide returns (trace_unavailable).
		h.opts.Logf("aos: %s %q: %v", method, ev.RequestID, err)
	}
	if !c.hasID {
		return b, false
	}
	o = o.WithoutHold() // AOS answers at once: an asked step is a deny naming its approval (data.approvalId); the identical retry is allowed once approved
	out, err = appendResult(b, c, method, params, sh, &o)
	if err != nil {
		h.opts.Logf("aos: %s %q: encoding the modified request: %v", method, ev.RequestID, err)
		return jsonrpc.AppendError(b[:mark], c.idRaw, &Error{Code: CodeInternalError,
			Message: fmt.Sprintf("internal error: encoding the modified request: %v", err)}), true
	}
	return out, true
}
