package acsclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MaxMessage bounds one answer (an HTTP body or a stdio frame).
const MaxMessage = 64 << 20

// Transport carries one JSON-RPC message (a request or a batch) to the
// Guardian and returns its answer.
type Transport interface {
	// RoundTrip sends body and returns the answer's bytes and, over HTTP,
	// its status code (0 on stdio). A non-2xx HTTP status is returned as a
	// *StatusError together with the body.
	RoundTrip(ctx context.Context, body []byte) (reply []byte, status int, err error)
	// Name is the transport's name in a ClientHello: "http", "https" or
	// "stdio".
	Name() string
}

// StatusError is a non-2xx HTTP answer.
type StatusError struct {
	Code int
	Body []byte
}

func (e *StatusError) Error() string {
	b := e.Body
	if len(b) > 200 {
		b = b[:200]
	}
	return fmt.Sprintf("acsclient: HTTP %d: %s", e.Code, bytes.TrimSpace(b))
}

// HTTPTransport POSTs each message to URL as application/json.
type HTTPTransport struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
	Token  string       // sent as "Authorization: Bearer <Token>" when set
}

// Name is "https" for an https:// URL, otherwise "http".
func (t *HTTPTransport) Name() string {
	if strings.HasPrefix(strings.ToLower(t.URL), "https://") {
		return "https"
	}
	return "http"
}

// RoundTrip implements Transport.
func (t *HTTPTransport) RoundTrip(ctx context.Context, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	hc := t.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if len(reply) > MaxMessage {
		return nil, resp.StatusCode, fmt.Errorf("acsclient: answer larger than %d bytes", MaxMessage)
	}
	if resp.StatusCode/100 != 2 {
		return reply, resp.StatusCode, &StatusError{Code: resp.StatusCode, Body: reply}
	}
	return reply, resp.StatusCode, nil
}

// StdioTransport speaks to a Guardian over a pair of streams with
// Content-Length framing (WriteFrame, ReadFrame). Calls are serialized: each
// writes one frame and takes the next frame read as its answer, so a call
// abandoned by its context leaves the stream out of step (its answer would be
// taken by the next call); close the transport after one.
type StdioTransport struct {
	mu     sync.Mutex
	w      io.Writer
	frames chan []byte
	err    error // the reader's final error, set before frames is closed
}

// NewStdioTransport reads answers from r and writes requests to w. It starts
// a goroutine that reads frames from r until r ends.
func NewStdioTransport(r io.Reader, w io.Writer) *StdioTransport {
	t := &StdioTransport{w: w, frames: make(chan []byte, 16)}
	go func() {
		br := bufio.NewReader(r)
		for {
			f, err := ReadFrame(br)
			if err != nil {
				t.err = err
				close(t.frames)
				return
			}
			t.frames <- f
		}
	}()
	return t
}

// Name is "stdio".
func (t *StdioTransport) Name() string { return "stdio" }

// RoundTrip implements Transport.
func (t *StdioTransport) RoundTrip(ctx context.Context, body []byte) ([]byte, int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := WriteFrame(t.w, body); err != nil {
		return nil, 0, err
	}
	select {
	case f, ok := <-t.frames:
		if !ok {
			if t.err == io.EOF {
				return nil, 0, io.ErrUnexpectedEOF
			}
			return nil, 0, t.err
		}
		return f, 0, nil
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// Close closes the writer when it is an io.Closer (the Guardian's stdin, so
// that it sees end of input).
func (t *StdioTransport) Close() error {
	if c, ok := t.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// WriteFrame writes body as one frame: "Content-Length: N\r\n\r\n" and the N
// bytes.
func WriteFrame(w io.Writer, body []byte) error {
	buf := make([]byte, 0, len(body)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, body...)
	_, err := w.Write(buf)
	return err
}

// ReadFrame reads one frame: header lines ending in CRLF (a bare LF is
// tolerated), of which Content-Length is required and the others (such as
// Content-Type) are ignored, a blank line, then Content-Length bytes. It
// returns io.EOF only when r ends before a frame starts.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	started := false
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err == io.EOF && !started && len(line) == 0 {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			if err == bufio.ErrBufferFull {
				return nil, errors.New("acsclient: frame header line too long")
			}
			return nil, err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			if !started {
				continue // stray blank line between frames
			}
			break
		}
		started = true
		name, value, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("acsclient: malformed frame header %q", s)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || v < 0 {
				return nil, fmt.Errorf("acsclient: bad Content-Length %q", value)
			}
			n = v
		}
	}
	if n < 0 {
		return nil, errors.New("acsclient: frame without Content-Length")
	}
	if n > MaxMessage {
		return nil, fmt.Errorf("acsclient: frame of %d bytes is larger than %d", n, MaxMessage)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}
