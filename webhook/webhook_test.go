package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" means valid
	}{
		{"http", Config{URL: "http://127.0.0.1:9100/hook"}, ""},
		{"https with query token", Config{URL: "https://user:hunter2@example.com/h?token=hunter2"}, ""},
		{"empty", Config{URL: " "}, "url is empty"},
		{"scheme", Config{URL: "ftp://example.com/x?token=hunter2"}, `scheme "ftp" not supported`},
		{"no scheme", Config{URL: "example.com/hook"}, `scheme "" not supported`},
		{"no host", Config{URL: "http:///hook"}, "has no host"},
		{"port only", Config{URL: "http://:8080/hook"}, "has no host"},
		{"unparsable", Config{URL: "http://hunter2@[::1/x"}, "url does not parse"},
		{"bad header name", Config{URL: "http://h/", Headers: map[string]string{"Bad Name": "hunter2"}}, "not a valid HTTP token"},
		{"bad header value", Config{URL: "http://h/", Headers: map[string]string{"Authorization": "Bearer hunter2\r\nX: y"}}, "header Authorization has a value with control characters"},
		{"negative timeout", Config{URL: "http://h/", Timeout: -time.Second}, "timeout -1s is negative"},
		{"negative max", Config{URL: "http://h/", MaxResponse: -1}, "max response -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.cfg, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if s := h.String(); strings.Contains(s, "hunter2") {
					t.Errorf("String leaks a secret: %s", s)
				}
				return
			}
			if err == nil {
				t.Fatalf("New succeeded, want error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}

func TestConfigStringMasksSecrets(t *testing.T) {
	c := Config{URL: "https://u:pw-secret@example.com/hook?key=q-secret",
		Headers: map[string]string{"Authorization": "Bearer tok-secret", "X-Api-Key": "k-secret"}}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "secret") {
			t.Errorf("leaks a secret: %s", s)
		}
		if !strings.Contains(s, "Authorization=***") || !strings.Contains(s, "https://example.com/hook?…") {
			t.Errorf("String = %s, want masked headers and a clean url", s)
		}
	}
}

// answer is a handler that replies with a fixed status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		headers map[string]string
		want    string // the patch; "<nil>" for nil
		wantErr string
	}{
		{name: "object patch", handler: answer(200, ` {"tool_input": {"path": "/tmp/x"}}`+"\n"), want: `{"tool_input": {"path": "/tmp/x"}}`},
		{name: "empty body", handler: answer(200, ""), want: "<nil>"},
		{name: "whitespace body", handler: answer(200, " \n"), want: "<nil>"},
		{name: "empty object", handler: answer(200, "{ }"), want: "<nil>"},
		{name: "no content", handler: answer(204, ""), want: "<nil>"},
		{name: "null is unchanged", handler: answer(200, "null"), want: "null"},
		{name: "message list", handler: answer(201, `[{"role":"user","content":"hi"}]`), want: `[{"role":"user","content":"hi"}]`},
		{name: "deny patch", handler: answer(200, `{"deny":true,"deny_reason":"no"}`), want: `{"deny":true,"deny_reason":"no"}`},
		{name: "HTTP 500", handler: answer(500, "internal failure "+strings.Repeat("x", 5000)), wantErr: "webhook returned HTTP 500 from http://"},
		{name: "HTTP 302 not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.com/elsewhere", http.StatusFound)
		}, wantErr: "webhook returned HTTP 302"},
		{name: "garbage", handler: answer(200, "<html>not json</html>"), wantErr: "response is not JSON: <html>not json</html>"},
		{name: "truncated JSON", handler: answer(200, `{"deny": tr`), wantErr: "response is not JSON"},
		{name: "headers delivered", headers: map[string]string{"Authorization": "Bearer s3cr3t", "X-Team": "sec"},
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer s3cr3t" || r.Header.Get("X-Team") != "sec" ||
					r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				b, _ := io.ReadAll(r.Body)
				fmt.Fprintf(w, `{"echo":%s}`, b)
			}, want: `{"echo":{"event":"tool.pre_call"}}`},
		{name: "unauthorized", headers: map[string]string{"Authorization": "Bearer wrong"},
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "bad token", http.StatusUnauthorized)
			}, wantErr: "webhook returned HTTP 401 from http://127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			h, err := New(Config{URL: srv.URL + "/hook?token=t0ken", Headers: tt.headers}, nil)
			if err != nil {
				t.Fatal(err)
			}
			patch, err := h.Run(context.Background(), []byte(`{"event":"tool.pre_call"}`))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Run = %s, want error containing %q", patch, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				if len(err.Error()) > 400 || strings.Contains(err.Error(), "t0ken") || strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error too long or leaks a secret: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := "<nil>"
			if patch != nil {
				got = string(patch)
			}
			if got != tt.want {
				t.Errorf("patch = %s, want %s", got, tt.want)
			}
		})
	}
}

// stalling servers: each must return when the client goes away.
var stalling = []struct {
	name    string
	handler http.HandlerFunc
}{
	{"slow", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a gone client once the body is read
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "{}")
	}},
	{"headers then silence", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		io.WriteString(w, `{"deny":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}},
	{"trickle", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, " "); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}},
}

func TestRunTimesOut(t *testing.T) {
	const timeout = 400 * time.Millisecond
	for _, tt := range stalling {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			h, err := New(Config{URL: srv.URL, Timeout: timeout}, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = h.Run(context.Background(), []byte(`{}`))
			elapsed := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run error = %v, want one wrapping context.DeadlineExceeded", err)
			}
			if elapsed > timeout+500*time.Millisecond {
				t.Errorf("Run returned after %s, want within %s", elapsed, timeout+500*time.Millisecond)
			}
		})
	}
}

func TestRunCallerCancel(t *testing.T) {
	srv := httptest.NewServer(stalling[0].handler)
	defer srv.Close()
	h, err := New(Config{URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := h.Run(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the caller's deadline", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("the caller's deadline was not honoured")
	}
}

// streamHuge writes n bytes of a JSON string in chunks, without a
// Content-Length, reusing one buffer.
func streamHuge(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("a", 64<<10))
		io.WriteString(w, `"`)
		for sent := 0; sent < n; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"`)
	}
}

// HeapGrowth runs f and returns how many bytes it allocated in all.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestRunHugeBody(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"streamed 50 MB", streamHuge(50 << 20)},
		{"declared 50 MB", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(50<<20))
			streamHuge(50<<20)(w, r)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			h, err := New(Config{URL: srv.URL, Timeout: 20 * time.Second}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var runErr error
			alloc := allocatedBy(func() { _, runErr = h.Run(context.Background(), []byte(`{}`)) })
			if runErr == nil || !strings.Contains(runErr.Error(), "larger than 1048576 bytes") {
				t.Fatalf("error = %v, want a size error", runErr)
			}
			if alloc > 16<<20 {
				t.Errorf("allocated %d MiB reading a huge body; want it bounded", alloc>>20)
			}
		})
	}
}

func TestRunSmallLimit(t *testing.T) {
	srv := httptest.NewServer(answer(200, `{"prompt":"0123456789"}`))
	defer srv.Close()
	for _, tt := range []struct {
		max int64
		ok  bool
	}{{23, true}, {22, false}} {
		h, err := New(Config{URL: srv.URL, MaxResponse: tt.max}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Run(context.Background(), nil)
		if (err == nil) != tt.ok {
			t.Errorf("MaxResponse %d: error = %v, want ok=%v", tt.max, err, tt.ok)
		}
	}
}

func TestRunConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(answer(200, "{}"))
	url := srv.URL
	srv.Close()
	h, err := New(Config{URL: url + "/x?token=t0ken"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Run(context.Background(), nil)
	if err == nil || strings.Contains(err.Error(), "t0ken") || !strings.HasPrefix(err.Error(), "webhook http://127.0.0.1") {
		t.Errorf("error = %v, want a transport error naming the url without its query", err)
	}
}
