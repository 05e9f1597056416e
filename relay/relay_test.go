package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/internal/noredirect"
)

func TestClient(t *testing.T) {
	own := func(*http.Request, []*http.Request) error { return nil }
	tests := []struct {
		name          string
		c             *http.Client
		header        time.Duration
		wantOwnPolicy bool
	}{
		{"default, no header timeout", nil, 0, false},
		{"default, header timeout", nil, 30 * time.Second, false},
		{"given, refusing redirects", &http.Client{Timeout: time.Second}, 0, false},
		{"given, its own redirect policy", &http.Client{CheckRedirect: own}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Client(tt.c, 7, tt.header)
			if tt.c != nil && c.Timeout != tt.c.Timeout {
				t.Errorf("the given client's Timeout became %s", c.Timeout)
			}
			if tt.wantOwnPolicy {
				if c != tt.c {
					t.Error("a client with its own CheckRedirect was copied")
				}
				return
			}
			if c.CheckRedirect == nil || c.CheckRedirect(&http.Request{URL: mustURL(t, "http://x.example/")}, nil) == nil {
				t.Error("the client follows redirects")
			}
			if tt.c != nil {
				if tt.c.CheckRedirect != nil {
					t.Error("the given client was changed")
				}
				return
			}
			tr, ok := c.Transport.(*http.Transport)
			if !ok || tr.MaxIdleConnsPerHost != 7 || tr.ResponseHeaderTimeout != tt.header || c.Timeout != 0 {
				t.Errorf("default transport %+v, timeout %s", tr, c.Timeout)
			}
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRequest(t *testing.T) {
	from := http.Header{
		"Accept":        {"text/event-stream"},
		"Authorization": {"Bearer client"},
		"X-Not-Passed":  {"no"},
		"X-Multi":       {"a", "b"},
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(context.Background(), sc)
	tests := []struct {
		name   string
		ctx    context.Context
		r      Request
		want   map[string]string // header: value ("" absent)
		method string
		body   string
	}{
		{"client headers that pass, in their case", context.Background(),
			Request{Method: http.MethodPost, Body: []byte("{}"), From: from, Pass: []string{"accept", "X-Multi"}},
			map[string]string{"Accept": "text/event-stream", "X-Multi": "a,b", "Authorization": "", "X-Not-Passed": ""}, "POST", "{}"},
		{"own headers after the client's", context.Background(),
			Request{Method: http.MethodPost, From: from, Pass: []string{"Accept"}, Own: func(h http.Header) { h.Set("Accept", "application/json"); h.Set("User-Agent", "g") }},
			map[string]string{"Accept": "application/json", "User-Agent": "g"}, "POST", ""},
		{"configured headers win", context.Background(),
			Request{Method: http.MethodGet, From: from, Pass: []string{"Authorization"}, Own: func(h http.Header) { h.Set("X-Token", "own") },
				Set: map[string]string{"Authorization": "Bearer upstream", "X-Token": "configured"}},
			map[string]string{"Authorization": "Bearer upstream", "X-Token": "configured"}, "GET", ""},
		{"no client: nothing passes", context.Background(),
			Request{Method: http.MethodPost, Pass: []string{"Accept"}},
			map[string]string{"Accept": ""}, "POST", ""},
		{"the trace context, when asked", traced,
			Request{Method: http.MethodPost, Trace: true},
			map[string]string{"Traceparent": "00-01000000000000000000000000000000-0200000000000000-01"}, "POST", ""},
		{"no trace context unless asked", traced,
			Request{Method: http.MethodGet},
			map[string]string{"Traceparent": ""}, "GET", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Start(tt.ctx, time.Minute)
			defer c.Done()
			tt.r.URL = "http://upstream.example/rpc"
			req, err := c.Request(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != tt.method || req.Context() != c.Context() {
				t.Errorf("method %s, context %v", req.Method, req.Context())
			}
			for k, v := range tt.want {
				if got := strings.Join(req.Header.Values(k), ","); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			var body []byte
			if req.Body != nil {
				body, _ = io.ReadAll(req.Body)
			}
			if string(body) != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
	if _, err := Start(context.Background(), time.Minute).Request(Request{Method: "GET", URL: "http://bad host/"}); err == nil {
		t.Error("a bad URL built a request")
	}
}

// timeoutErr is a transport timeout.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestFailure(t *testing.T) {
	redirect := httptest.NewServer(http.RedirectHandler("http://elsewhere.example/", http.StatusFound))
	defer redirect.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	down := closed.URL + "/?token=s3cret"
	closed.Close()

	tests := []struct {
		name    string
		url     string
		err     error // a transport error to classify instead of calling url
		timeout time.Duration
		kind    Kind
		text    string
	}{
		{"the call's deadline", slow.URL, nil, 50 * time.Millisecond, Deadline, "upstream did not answer in time"},
		{"a transport timeout", "", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, time.Minute, Timeout, "upstream timed out"},
		{"a redirect", redirect.URL, nil, time.Minute, Redirected, "upstream answered HTTP 302, a redirect (not followed)"},
		{"unreachable, the URL not repeated", down, nil, time.Minute, Unreachable, "upstream unreachable: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Start(context.Background(), tt.timeout)
			defer c.Done()
			err := tt.err
			if err == nil {
				req, rerr := c.Request(Request{Method: http.MethodGet, URL: tt.url})
				if rerr != nil {
					t.Fatal(rerr)
				}
				resp, derr := c.Do(Client(nil, 1, 0), req)
				if derr == nil {
					resp.Body.Close()
					t.Fatal("the call succeeded")
				}
				err = derr
			} else {
				err = c.Failure(&url.Error{Op: "Get", URL: "http://upstream.example/?token=s3cret", Err: err})
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
			if e.Kind != tt.kind || !strings.HasPrefix(e.Error(), tt.text) {
				t.Errorf("kind %d %q, want %d %q", e.Kind, e.Error(), tt.kind, tt.text)
			}
			if strings.Contains(e.Error(), "s3cret") || strings.Contains(e.Error(), "?token") {
				t.Errorf("the error repeats the URL: %q", e.Error())
			}
			if tt.kind == Redirected && noredirect.Target(err) == "" {
				t.Error("the redirect's target is lost for the log")
			}
			if tt.kind == Deadline && (!c.TimedOut() || !errors.Is(err, context.DeadlineExceeded)) {
				t.Errorf("TimedOut %v, the transport's error %v", c.TimedOut(), err)
			}
		})
	}
}

func TestCallGone(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	c := Start(parent, time.Minute)
	defer c.Done()
	if c.Gone() {
		t.Fatal("gone before the client left")
	}
	cancel()
	<-c.Context().Done()
	if !c.Gone() || c.TimedOut() {
		t.Errorf("gone %v, timed out %v", c.Gone(), c.TimedOut())
	}
}

func TestCallStopAndRearm(t *testing.T) {
	c := Start(context.Background(), 30*time.Millisecond)
	defer c.Done()
	c.Stop()
	time.Sleep(60 * time.Millisecond)
	if c.TimedOut() || c.Context().Err() != nil {
		t.Fatal("a stopped call timed out")
	}
	c.Rearm(10 * time.Millisecond)
	select {
	case <-c.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("a re-armed call did not time out")
	}
	if !c.TimedOut() {
		t.Error("TimedOut is false")
	}
}

// failing is a reader that fails after its bytes.
type failing struct {
	r   io.Reader
	err error
}

func (f *failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestReadAll(t *testing.T) {
	broken := errors.New("connection reset")
	tests := []struct {
		name    string
		r       io.Reader
		max     int64
		want    string
		tooBig  bool
		wantErr error
	}{
		{"under", strings.NewReader("abc"), 4, "abc", false, nil},
		{"exactly the bound", strings.NewReader("abcd"), 4, "abcd", false, nil},
		{"over", strings.NewReader("abcde"), 4, "", true, nil},
		{"empty", strings.NewReader(""), 4, "", false, nil},
		{"a read error", &failing{strings.NewReader("ab"), broken}, 4, "", false, broken},
		{"a read error comes first", &failing{strings.NewReader("abcdef"), broken}, 8, "", false, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadAll(tt.r, tt.max)
			var tl *TooLargeError
			switch {
			case tt.tooBig:
				if !errors.As(err, &tl) || tl.Max != tt.max || b != nil || err.Error() != "message exceeds 4 bytes" {
					t.Fatalf("%q %v, want a TooLargeError", b, err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("%v, want %v", err, tt.wantErr)
				}
			case err != nil || string(b) != tt.want:
				t.Fatalf("%q %v, want %q", b, err, tt.want)
			}
		})
	}
}

func TestIsEventStream(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"text/event-stream", true},
		{"text/event-stream; charset=utf-8", true},
		{"Text/Event-Stream", true},
		{" text/event-stream ;x=y", true},
		{"application/json", false},
		{"text/event-streamx", false},
		{"", false},
		{"text/event", false},
	}
	for _, tt := range tests {
		if got := IsEventStream(tt.ct); got != tt.want {
			t.Errorf("IsEventStream(%q) = %v, want %v", tt.ct, got, tt.want)
		}
	}
}
