package aosclient

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

	"github.com/wardenhq/warden"
)

func stepEvent() *warden.Event {
	return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "e1", "toolId": "t", "inputs": []any{}},
		"context":         map[string]any{"agent": map[string]any{"id": "a"}},
	}}
}

func TestTransport(t *testing.T) {
	const timeout = 400 * time.Millisecond
	tests := []struct {
		name    string
		handler http.HandlerFunc
		headers map[string]string
		wantErr string
		timeout bool // the error wraps context.DeadlineExceeded, in time
	}{
		{name: "slow", timeout: true, handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}},
		{name: "trickle", timeout: true, handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(200)
			for {
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
		{name: "HTTP 500", wantErr: "remote guardian returned HTTP 500 from http://127.0.0.1", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "guardian crashed", 500)
		}},
		{name: "garbage", wantErr: "answer is not a JSON-RPC response: x", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte{0, 1, 2, 'x'})
		}},
		{name: "headers delivered", headers: map[string]string{"Authorization": "Bearer s3cr3t"},
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer s3cr3t" || r.Header.Get("Content-Type") != "application/json" {
					http.Error(w, "unauthorized", 401)
					return
				}
				fmt.Fprint(w, `{"jsonrpc":"2.0","id":`)
				var req struct{ ID string }
				b, _ := io.ReadAll(r.Body)
				fmt.Sscanf(string(b), `{"jsonrpc":"2.0","id":%q`, &req.ID)
				fmt.Fprintf(w, "%q,\"result\":{\"decision\":\"allow\",\"message\":\"ok\"}}", req.ID)
			}},
		{name: "wrong token", headers: map[string]string{"Authorization": "Bearer s3cr3t"}, wantErr: "HTTP 401",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "unauthorized", 401) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c, err := New(Config{URL: srv.URL + "/aos", Headers: tt.headers, Timeout: timeout}, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			d, err := c.Decide(context.Background(), stepEvent())
			elapsed := time.Since(start)
			switch {
			case tt.timeout:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("error = %v, want one wrapping context.DeadlineExceeded", err)
				}
				if elapsed > timeout+500*time.Millisecond {
					t.Errorf("returned after %s, want within %s", elapsed, timeout+500*time.Millisecond)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error leaks the token: %v", err)
				}
			default:
				if err != nil || d.Verdict != warden.Allow {
					t.Fatalf("Decide = %v, %v; want allow", d.Verdict, err)
				}
			}
		})
	}
}

func TestHugeAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		chunk := []byte(strings.Repeat("a", 64<<10))
		io.WriteString(w, `{"jsonrpc":"2.0","id":"x","result":{"decision":"allow","message":"`)
		for sent := 0; sent < 50<<20; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}}`)
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, Timeout: 20 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = c.Decide(context.Background(), stepEvent())
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than 4194304 bytes") {
		t.Fatalf("error = %v, want a size error", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB for a 50 MiB answer; want it bounded by the 4 MiB cap", alloc>>20)
	}
}

func TestNewAndString(t *testing.T) {
	if _, err := New(Config{URL: "unix:///run/g.sock"}, nil); err == nil || !strings.Contains(err.Error(), `scheme "unix" not supported`) {
		t.Errorf("New error = %v", err)
	}
	cfg := Config{URL: "https://g.example/aos?key=k-secret", Headers: map[string]string{"Authorization": "Bearer t-secret"}}
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), cfg.String(), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, "secret") || !strings.HasPrefix(s, "aos") && !strings.HasPrefix(s, "remote guardian") {
			t.Errorf("String = %q", s)
		}
	}
	if got := cfg.String(); got != "aos{url=https://g.example/aos?… headers=[Authorization=***] max_response=4194304}" {
		t.Errorf("Config.String = %q", got)
	}
}
