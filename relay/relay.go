// Package relay is the HTTP side the two gateways that forward JSON-RPC to
// an upstream share: the MCP Streamable-HTTP gateway (mcpgate) and the A2A
// proxy (a2agate). It calls the upstream — a client that follows no
// redirect (internal/noredirect), a deadline per call, the client's
// headers a gateway lets through, then the upstream's configured ones,
// the caller's trace context — classifies a failed call, reads a JSON
// answer within a size bound, tells an SSE answer from it, and relays an
// SSE stream event by event (stream.go), the gateway deciding each event
// before anything of it is written, under an idle timeout.
//
// What the messages mean stays in the gateways: which headers pass, how a
// message is decided, the JSON-RPC error that answers a failed call or
// replaces a refused event (each gateway has its own error shapes, with
// the id as sent), and what each failure is logged as.
//
// It is a package of its own rather than part of sse: sse is the
// event-stream format (which the server's own streams also write) and
// knows nothing of HTTP; relay is a gateway's upstream call, which an SSE
// answer is only one outcome of.
package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/noredirect"
	"github.com/wardenhq/warden/internal/traceparent"
)

// Client returns c refusing redirects (noredirect.Client: a client with a
// CheckRedirect of its own is returned as it is). When c is nil it is a
// client for upstreams: 10s to dial and for the TLS handshake, 30s
// keep-alives, idle connections kept 90s and at most idlePerHost of them
// per host, headerTimeout for the response headers (0: none), and no
// total timeout, which would cut streams.
func Client(c *http.Client, idlePerHost int, headerTimeout time.Duration) *http.Client {
	if c == nil {
		c = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: headerTimeout,
			MaxIdleConnsPerHost:   idlePerHost,
			IdleConnTimeout:       90 * time.Second,
		}}
	}
	// An upstream's redirect is not followed: it would carry the
	// configured headers and the call elsewhere.
	return noredirect.Client(c)
}

// Call is one upstream call under a deadline: a timer cancels its context
// when it fires, with context.DeadlineExceeded as the cause (what the
// transport's errors then say). A stream re-arms it after every event
// (Rearm), which makes it an idle timeout.
type Call struct {
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	timedOut atomic.Bool
}

// Start starts a call that parent's end or timeout cancels. Done releases
// it.
func Start(parent context.Context, timeout time.Duration) *Call {
	c := &Call{parent: parent}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	c.timer = time.AfterFunc(timeout, func() { c.timedOut.Store(true); c.cancel(context.DeadlineExceeded) })
	return c
}

// Context is the call's context: the upstream request's.
func (c *Call) Context() context.Context { return c.ctx }

// Stop stops the timer: the answer is in and no deadline applies.
func (c *Call) Stop() { c.timer.Stop() }

// Rearm sets the timer to fire d from now.
func (c *Call) Rearm(d time.Duration) { c.timer.Reset(d) }

// TimedOut reports whether the timer fired (and cancelled the call).
func (c *Call) TimedOut() bool { return c.timedOut.Load() }

// Gone reports whether the parent context ended: the client went away.
func (c *Call) Gone() bool { return c.parent.Err() != nil }

// Done stops the timer and cancels the context, which closes the
// upstream's answer if it is still open.
func (c *Call) Done() { c.timer.Stop(); c.cancel(nil) }

// Request is one request to an upstream.
type Request struct {
	Method, URL string
	Body        []byte // nil: none
	// From are the client's headers, of which Pass are copied, in order
	// (nil From: none).
	From http.Header
	Pass []string
	// Own sets the gateway's own headers, after the client's and before
	// the configured ones (nil: none).
	Own func(http.Header)
	// Set are the upstream's configured headers: secrets, which win and
	// are never logged.
	Set map[string]string
	// Trace carries the caller's trace context (a traceparent header,
	// when the context has a span).
	Trace bool
}

// Request builds r in the call's context: the client's headers Pass lets
// through, Own's, the configured ones, then the trace context.
func (c *Call) Request(r Request) (*http.Request, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(c.ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, err
	}
	for _, k := range r.Pass {
		if v := r.From.Values(k); len(v) > 0 {
			req.Header[http.CanonicalHeaderKey(k)] = v[:len(v):len(v)] // shared; an Add copies
		}
	}
	if r.Own != nil {
		r.Own(req.Header)
	}
	for k, v := range r.Set {
		req.Header.Set(k, v)
	}
	if r.Trace {
		traceparent.Inject(c.ctx, req.Header)
	}
	return req, nil
}

// Do sends req with client. A failure is an *Error.
func (c *Call) Do(client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, c.Failure(err)
	}
	return resp, nil
}

// Kind is why an upstream call failed.
type Kind int

const (
	// Unreachable: the transport failed (refused, reset, DNS, TLS, the
	// answer cut off).
	Unreachable Kind = iota
	// Deadline: the call's own timer fired (Start's timeout, or a
	// stream's idle time).
	Deadline
	// Timeout: the transport timed out (its dial, TLS or header timeout).
	Timeout
	// Redirected: the upstream answered a redirect, not followed
	// (a *noredirect.Error is in the chain; noredirect.Target names where
	// it pointed, for logs).
	Redirected
)

// Error is a failed upstream call.
type Error struct {
	Kind Kind
	// Err is the cause without its *url.Error, whose text repeats the URL
	// (which may hold a token).
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case Deadline:
		return "upstream did not answer in time"
	case Timeout:
		return "upstream timed out"
	case Redirected:
		return "upstream " + e.Err.Error()
	}
	return "upstream unreachable: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Failure classifies err, an error of this call (sending it or reading
// its answer), in this order: the call's timer fired, the transport timed
// out, the upstream redirected, else it is unreachable.
func (c *Call) Failure(err error) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	var re *noredirect.Error
	switch {
	case c.TimedOut():
		return &Error{Kind: Deadline, Err: err}
	case errors.As(err, &ne) && ne.Timeout():
		return &Error{Kind: Timeout, Err: err}
	case errors.As(err, &re):
		return &Error{Kind: Redirected, Err: err}
	}
	return &Error{Kind: Unreachable, Err: err}
}

// TooLargeError is a body over the size bound of ReadAll.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("message exceeds %d bytes", e.Max) }

// ReadAll reads r to its end, at most max bytes: more is a
// *TooLargeError (and no bytes). A read error comes first.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return b, nil
}

// IsEventStream reports whether a Content-Type is text/event-stream: the
// media type, in any case (RFC 9110), with any parameters.
func IsEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}
