package mcpgate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/wardenhq/warden/approval"

	"github.com/google/uuid"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/jsonrpc"
)

// ErrServerExited is returned by Stdio.Run when the server's output ends.
var ErrServerExited = errors.New("MCP server closed its output (exited or crashed)")

// StdioOptions configure a stdio gateway.
type StdioOptions struct {
	// Server is the tool view's server name (Tool.Server): the --name, by
	// default the command's base name.
	Server string
	// SessionID is recorded as every event's session id; "" generates one.
	SessionID string
	// MaxLine bounds one line in either direction (default DefaultMaxMessage).
	MaxLine int
	// MaxBatch bounds the entries of a batch line in either direction
	// (limits.batch; default jsonrpc.DefaultMaxBatch): a client batch over
	// it is refused whole (-32600), a server one dropped.
	MaxBatch int
	// Logf reports what the gateway drops (malformed server output); it goes
	// to stderr, never to stdout, which is the MCP channel. Nil: silent.
	Logf func(format string, args ...any)
	// Pins pins the server's tools (see Pins); nil: no pinning.
	Pins *Pins
}

// Stdio relays newline-delimited JSON-RPC between an MCP client and a server,
// deciding every message. One Stdio serves one session: Run it once.
type Stdio struct {
	gate
	sid     string
	max     int
	logf    func(string, ...any)
	client  *lineWriter // to the client
	server  *lineWriter // to the server
	fromCli *pending    // client requests awaiting the server's answer
	fromSrv *pending    // server requests awaiting the client's answer
	held    heldSet     // messages waiting for an approval
}

// maxHeld bounds the messages of one stdio session waiting for approvals.
const maxHeld = 1024

// heldSet tracks the messages waiting for approvals, by request id key
// ("" for messages without one), to withdraw one the client cancels.
type heldSet struct {
	mu sync.Mutex
	n  int
	by map[string]context.CancelFunc
}

func (h *heldSet) add(key string, cancel context.CancelFunc) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n >= maxHeld {
		return false
	}
	h.n++
	if key != "" {
		if h.by == nil {
			h.by = map[string]context.CancelFunc{}
		}
		h.by[key] = cancel
	}
	return true
}

func (h *heldSet) done(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n--
	if key != "" {
		delete(h.by, key)
	}
}

func (h *heldSet) cancel(key string) {
	h.mu.Lock()
	c := h.by[key]
	h.mu.Unlock()
	if c != nil {
		c()
	}
}

// NewStdio returns a stdio gateway deciding with dec.
func NewStdio(dec warden.Core, opts StdioOptions) *Stdio {
	s := &Stdio{gate: gate{dec: dec, server: opts.Server, maxBatch: batchLimit(opts.MaxBatch), pins: opts.Pins}, sid: opts.SessionID, max: opts.MaxLine,
		logf: opts.Logf, fromCli: newPending(), fromSrv: newPending()}
	if s.sid == "" {
		id, err := uuid.NewV7()
		if err != nil {
			id = uuid.New()
		}
		s.sid = id.String()
	}
	if s.max <= 0 {
		s.max = DefaultMaxMessage
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	return s
}

// SessionID is the id recorded with every event of this session.
func (s *Stdio) SessionID() string { return s.sid }

// lineWriter writes whole lines, one writer at a time.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) write(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(append(l.buf[:0], b...), '\n')
	_, err := l.w.Write(l.buf)
	if cap(l.buf) > 64<<10 {
		l.buf = nil // do not keep a large message's buffer
	}
	return err
}

// Run relays between the client (reading fromClient, writing toClient) and
// the server (reading fromServer, writing toServer) until one side ends: the
// client's input ends (nil), the server's output ends (ErrServerExited, after
// every request in flight was answered with a CodeUpstream error), a write to the
// client fails, or ctx is done. Run does not close anything; the caller closes
// the streams (and stops the server), which ends the reading goroutines.
func (s *Stdio) Run(ctx context.Context, fromClient io.Reader, toClient io.Writer, fromServer io.Reader, toServer io.Writer) error {
	s.client = &lineWriter{w: toClient}
	s.server = &lineWriter{w: toServer}
	done := make(chan error, 2)
	// srvGone is set before the requests in flight are answered, so a client
	// that hangs up on reading those answers still sees the server's exit.
	var srvGone atomic.Bool
	go func() { done <- s.loop(ctx, fromClient, s.fromClientLine, nil) }()
	go func() {
		done <- s.loop(ctx, fromServer, s.fromServerLine, func() {
			srvGone.Store(true)
			for _, r := range s.fromCli.drain() {
				_ = s.client.write(upstreamFailed(r.id, s.gate.server, "MCP server exited before answering"))
			}
		})
	}()
	select {
	case err := <-done:
		if err == nil && srvGone.Load() {
			return ErrServerExited
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop reads lines from r and hands each to handle; at the end of r it calls
// atEOF (if set) and returns nil for the client side, ErrServerExited for the
// server side.
func (s *Stdio) loop(ctx context.Context, r io.Reader, handle func(context.Context, []byte, bool) error, atEOF func()) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, s.max)
		if err != nil {
			if atEOF != nil {
				atEOF()
				if err == io.EOF {
					return ErrServerExited
				}
				return fmt.Errorf("%w: %v", ErrServerExited, err)
			}
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading from the client: %w", err)
		}
		if !tooLong && len(trimSpace(line)) == 0 {
			continue
		}
		if err := handle(ctx, line, tooLong); err != nil {
			return err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// headSize is how much of an over-long line readLine keeps (to find its id).
const headSize = 512

// readLine returns the next line without its newline, in a fresh slice. A
// line longer than max is consumed and reported as tooLong, with only its
// first headSize bytes. A
// last line without a newline is returned before io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, bool, error) {
	var line []byte
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+1 {
				// Keep the head: it usually holds the id, to answer the request.
				tooLong = true
				line = append(line, frag...)[:min(len(line)+len(frag), headSize)]
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && (len(line) > 0 || tooLong) {
				return line, tooLong, nil
			}
			return nil, false, err
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return line, tooLong, nil
	}
}

// fromClientLine handles one line from the client. Only a failed write to the
// client ends the session.
func (s *Stdio) fromClientLine(ctx context.Context, line []byte, tooLong bool) error {
	if tooLong {
		id, _ := headID(line)
		return s.client.write(errorMessage(id, CodeInvalidRequest, fmt.Sprintf("message exceeds %d bytes", s.max)))
	}
	msgs, bad, _, err := parse(line, s.maxBatch)
	var over *jsonrpc.BatchLimitError
	if errors.As(err, &over) {
		return s.client.write(errorMessage(nil, CodeInvalidRequest, over.Error()))
	}
	if err != nil {
		return s.client.write(errorMessage(nil, CodeParseError, "parse error: "+err.Error()))
	}
	for _, b := range bad {
		if err := s.client.write(errorMessage(b.id, CodeInvalidRequest, b.why)); err != nil {
			return err
		}
	}
	for _, msg := range msgs {
		if err := s.outbound(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}

// fromServerLine handles one line from the server: garbage is logged (one
// line, never its content) and dropped.
func (s *Stdio) fromServerLine(ctx context.Context, line []byte, tooLong bool) error {
	if tooLong {
		s.logf("MCP server sent a line over %d bytes; dropped", s.max)
		if id, ok := headID(line); ok {
			if r, ok := s.fromCli.takeRaw(id); ok { // the request it answered must not hang
				return s.client.write(upstreamFailed(r.id, s.gate.server, fmt.Sprintf("MCP server's answer exceeds %d bytes", s.max)))
			}
		}
		return nil
	}
	msgs, bad, _, err := parse(line, s.maxBatch)
	if err != nil {
		s.logf("MCP server sent a line that is not JSON or is a batch over the limit (%d bytes); dropped", len(line))
		return nil
	}
	if len(bad) > 0 {
		s.logf("MCP server sent %d message(s) that are not JSON-RPC or are ambiguous; dropped", len(bad))
	}
	for _, b := range bad { // the request an ambiguous answer answered must not hang
		if r, ok := s.fromCli.takeRaw(b.id); ok && b.id != nil {
			if err := s.client.write(upstreamFailed(r.id, s.gate.server, "MCP server's answer refused: "+b.why)); err != nil {
				return err
			}
		}
	}
	for _, msg := range msgs {
		if err := s.inbound(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}

// outbound decides a message from the client and forwards it to the server,
// or answers it.
func (s *Stdio) outbound(ctx context.Context, msg *message) error {
	var req answered
	isResp := !msg.isRequest() && !msg.isNotification()
	if isResp {
		if r, ok := s.fromSrv.take(msg.m["id"]); ok { // the client answers a server request
			req.covers = r.covers
		}
	}
	out := s.outcomeChanges(ctx, msg, warden.Outbound, s.sid, req, nil)
	if held(out) {
		return s.hold(ctx, msg, out, s.outboundDecided)
	}
	return s.outboundDecided(msg, s.verdictOf(msg, approval.Settle(ctx, s.dec, out)))
}

// outboundDecided forwards or answers a client message once decided.
func (s *Stdio) outboundDecided(msg *message, v verdict) error {
	isResp := !msg.isRequest() && !msg.isNotification()
	if v.deny {
		switch {
		case msg.isRequest():
			return s.client.write(v.denial(msg.id))
		case isResp: // the server gets an error instead of the client's answer
			_ = s.server.write(v.denial(msg.id))
		}
		return nil // a denied notification is dropped (it is in the trace)
	}
	if msg.isRequest() {
		s.fromCli.put(msg, s.toolOf(msg), listingOf(msg), v.covers)
	} else if msg.method() == "notifications/cancelled" {
		if p, ok := msg.m["params"].(map[string]any); ok {
			s.fromCli.take(p["requestId"])
			s.held.cancel(idKey(p["requestId"]))
		}
	}
	if err := s.server.write(v.out); err != nil && msg.isRequest() {
		s.fromCli.take(msg.m["id"])
		return s.client.write(upstreamFailed(msg.id, s.gate.server, "MCP server is not reading: "+err.Error()))
	}
	return nil
}

// hold waits for the approval of an asked message beside the session, so
// the messages after it keep flowing, then goes on with then. At most
// maxHeld messages wait at once; beyond that an asked message is refused
// at once (its approval withdrawn). A client's notifications/cancelled for
// a held request withdraws its approval.
func (s *Stdio) hold(ctx context.Context, msg *message, out warden.Outcome, then func(*message, verdict) error) error {
	hctx, cancel := context.WithCancel(ctx)
	key := ""
	if msg.isRequest() {
		key = idKey(msg.m["id"])
	}
	if !s.held.add(key, cancel) {
		cancel() // over the bound: withdraw now
		return then(msg, s.verdictOf(msg, approval.Settle(hctx, s.dec, out)))
	}
	go func() {
		defer s.held.done(key)
		defer cancel()
		if err := then(msg, s.verdictOf(msg, approval.Settle(hctx, s.dec, out))); err != nil {
			s.logf("answering a held message: %v", err)
		}
	}()
	return nil
}

// inbound decides a message from the server and forwards it to the client,
// or answers it.
func (s *Stdio) inbound(ctx context.Context, msg *message) error {
	var req answered
	var list *listing
	isResp := !msg.isRequest() && !msg.isNotification()
	if isResp {
		if r, ok := s.fromCli.take(msg.m["id"]); ok {
			req, list = answered{tool: r.tool, covers: r.covers}, r.list
		}
	}
	lc := s.pins.check(ctx, s.gate.server, msg, list) // nil unless a tools/list answer
	out := s.outcomeChanges(ctx, msg, warden.Inbound, s.sid, req, lc.toolChanges())
	then := s.inboundDecided
	if lc != nil {
		then = func(m *message, v verdict) error {
			s.pins.settled(ctx, lc, s.endpoint, !v.deny)
			return s.inboundDecided(m, v)
		}
	}
	if held(out) {
		return s.hold(ctx, msg, out, then)
	}
	return then(msg, s.verdictOf(msg, approval.Settle(ctx, s.dec, out)))
}

// inboundDecided forwards or answers a server message once decided.
func (s *Stdio) inboundDecided(msg *message, v verdict) error {
	isResp := !msg.isRequest() && !msg.isNotification()
	if v.deny {
		switch {
		case msg.isRequest(): // a server request (sampling, elicitation, roots) is refused
			_ = s.server.write(v.denial(msg.id))
			return nil
		case isResp:
			return s.client.write(v.denial(msg.id))
		}
		return nil
	}
	if msg.isRequest() {
		s.fromSrv.put(msg, nil, nil, v.covers)
	} else if msg.method() == "notifications/cancelled" {
		if p, ok := msg.m["params"].(map[string]any); ok {
			s.fromSrv.take(p["requestId"])
		}
	}
	return s.client.write(v.out)
}
