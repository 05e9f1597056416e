package server

import (
	"container/list"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// bodyDeadline bounds reading a request body to d from the start of the
// request (d 0: no bound): a client trickling its body is cut off (the read
// fails and the connection is closed) instead of holding a goroutine and a
// connection without end. Once the body is read to its end the deadline is
// lifted, so a long answer (an SSE stream) is not cut by it.
//
// A body not read to its end when the handler returns (a refusal, a 404,
// a GET /healthz with a body, an error part way) is not read on either:
// the connection's read deadline is set to now, so net/http, which would
// read up to 256 KiB of what is left before writing the response and
// again after it, writes the response with Connection: close and closes
// the connection at once.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if d > 0 {
			if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
				next.ServeHTTP(w, r) // not a connection that has deadlines (a test recorder)
				return
			}
		}
		b := &deadlineBody{ReadCloser: r.Body, rc: rc, d: d}
		r.Body = b
		next.ServeHTTP(w, r)
		if !b.done.Load() {
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

// ErrBodyTimeout is matched (errors.Is) by the error reading a request body
// returns once limits.body_timeout has passed; it also matches
// os.ErrDeadlineExceeded.
var ErrBodyTimeout = errors.New("request body not received in time (limits.body_timeout)")

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration // 0: no deadline of its own
	done atomic.Bool   // read to its end (a handler may read in another goroutine)
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.done.Load():
		b.done.Store(true)
		if b.d > 0 {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && b.d > 0:
		err = &bodyTimeoutError{b.d}
	}
	return n, err
}

type bodyTimeoutError struct{ d time.Duration }

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("request body not received within %s (limits.body_timeout)", e.d)
}
func (e *bodyTimeoutError) Is(target error) bool {
	return target == ErrBodyTimeout || target == os.ErrDeadlineExceeded
}

// ConnLimiter is a net.Listener that holds at most max connections open,
// so that a flood of connections cannot exhaust file descriptors, while new
// clients (a health check among them) are still accepted at once: with
// max open, the connection that has waited longest without a request in
// progress — one still sending its headers (slowloris) or idle between
// keep-alive requests — is closed (with a reset, so it leaves no
// TIME_WAIT) to make room, once it has been so for evictGrace.
// Connections serving a request are never closed by it; when all max are,
// Accept waits for one to end, as golang.org/x/net/netutil.LimitListener
// does.
//
// Set the http.Server's ConnState to the limiter's ConnState, which tells
// it which connections are serving a request.
type ConnLimiter struct {
	net.Listener
	max int

	mu     sync.Mutex
	cond   sync.Cond
	open   int
	idle   list.List // *limitedConn without a request in progress, oldest first
	closed bool

	evicted atomic.Int64
}

// LimitConns returns ln limited to max open connections.
func LimitConns(ln net.Listener, max int) *ConnLimiter {
	l := &ConnLimiter{Listener: ln, max: max}
	l.cond.L = &l.mu
	return l
}

type limitedConn struct {
	net.Conn
	l     *ConnLimiter
	elem  *list.Element // in l.idle; nil while serving a request or closed
	since time.Time     // when it last entered l.idle
	gone  bool          // closed: counted out
}

// evictGrace is how long a connection must have been without a request
// in progress before the limiter may close it: a client that has just
// connected and sent its request is not closed before the server reads it.
const evictGrace = 50 * time.Millisecond

// Accept makes room when max connections are open — closing the oldest one
// without a request in progress once it has been so for evictGrace, or
// waiting for one to end when all are serving requests — then accepts.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	l.mu.Lock()
	for !l.closed && l.open >= l.max {
		e := l.idle.Front()
		if e == nil {
			l.cond.Wait()
			continue
		}
		v := e.Value.(*limitedConn)
		if wait := evictGrace - time.Since(v.since); wait > 0 {
			l.mu.Unlock()
			time.Sleep(wait)
			l.mu.Lock()
			continue
		}
		l.idle.Remove(e)
		v.elem = nil
		l.mu.Unlock()
		l.evicted.Add(1)
		if tc, ok := v.Conn.(interface{ SetLinger(int) error }); ok {
			_ = tc.SetLinger(0) // a reset: no TIME_WAIT left behind
		}
		_ = v.Close()
		l.mu.Lock()
	}
	l.mu.Unlock()
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l, since: time.Now()}
	l.mu.Lock()
	l.open++
	lc.elem = l.idle.PushBack(lc)
	l.mu.Unlock()
	return lc, nil
}

// Close closes the listener and wakes a waiting Accept.
func (l *ConnLimiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// Open returns the number of connections open.
func (l *ConnLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Evicted returns how many connections the limiter has closed.
func (l *ConnLimiter) Evicted() int64 { return l.evicted.Load() }

// ConnState tracks which connections are serving a request; it is the
// http.Server's ConnState hook.
func (l *ConnLimiter) ConnState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok || lc.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateActive, http.StateHijacked:
		if lc.elem != nil {
			l.idle.Remove(lc.elem)
			lc.elem = nil
		}
	case http.StateIdle:
		if lc.elem == nil && !lc.gone {
			lc.since = time.Now()
			lc.elem = l.idle.PushBack(lc)
			l.cond.Signal()
		}
	}
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	l := c.l
	l.mu.Lock()
	if !c.gone {
		c.gone = true
		l.open--
		if c.elem != nil {
			l.idle.Remove(c.elem)
			c.elem = nil
		}
		l.cond.Signal()
	}
	l.mu.Unlock()
	return err
}
