package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/storetest"
)

// TestAttackTenantStreams: the runs stream and the approvals stream are
// bounded to 64 open at once each, for every caller together: one tenant
// could take every slot and keep the others' consoles from streaming.
// Now a tenant holds at most limits.tenant_streams (default 16) of each
// kind; the next is 503 with Retry-After, while another tenant, and the
// operator's tokens without a tenant, still get theirs, and a slot freed
// is taken again.
func TestAttackTenantStreams(t *testing.T) {
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	c := &auth.Config{}
	for _, e := range []struct{ name, tok, tenant string }{
		{"acme-viewer", "wdn_acme-viewer-0123456789", "acme"},
		{"beta-viewer", "wdn_beta-viewer-0123456789", "beta"},
		{"ops", "wdn_ops-viewer-0123456789", ""},
	} {
		h, err := auth.ParseHash(auth.Hash(e.tok))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: auth.Read | auth.Approve, Tenant: e.tenant})
	}
	done := make(chan struct{})
	srv := httptest.NewServer(New(Options{Store: st, Approvals: m, Security: Security{Auth: c}, Done: done}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	// open opens a stream and waits for its first bytes; it returns the
	// status and, for a stream that is open, the function that closes it.
	open := func(path, tok string) (int, string, func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b := make([]byte, 300)
			n, _ := resp.Body.Read(b)
			resp.Body.Close()
			cancel()
			return resp.StatusCode, resp.Header.Get("Retry-After") + " " + string(b[:n]), nil
		}
		if path == "/api/runs/stream" { // the runs stream says it is subscribed
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, ": subscribed") {
				t.Fatalf("%s: %q %v", path, line, err)
			}
		}
		return 200, "", func() { cancel(); resp.Body.Close() }
	}
	for _, path := range []string{"/api/runs/stream", "/api/approvals/stream"} {
		t.Run(path, func(t *testing.T) {
			var closers []func()
			defer func() {
				for _, f := range closers {
					f()
				}
			}()
			for i := range DefaultTenantStreams {
				code, msg, closeIt := open(path, "wdn_acme-viewer-0123456789")
				if code != 200 {
					t.Fatalf("acme's stream %d: %d %s", i+1, code, msg)
				}
				closers = append(closers, closeIt)
			}
			code, msg, extra := open(path, "wdn_acme-viewer-0123456789")
			if extra != nil {
				closers = append(closers, extra)
			}
			if code != 503 || !strings.HasPrefix(msg, "5 ") || !strings.Contains(msg, "limits.tenant_streams") {
				t.Fatalf("acme's stream %d: %d %q, want 503 with Retry-After naming limits.tenant_streams", DefaultTenantStreams+1, code, msg)
			}
			for _, tok := range []string{"wdn_beta-viewer-0123456789", "wdn_ops-viewer-0123456789"} {
				code, msg, closeIt := open(path, tok)
				if code != 200 {
					t.Fatalf("another caller's stream beside acme's %d: %d %s", DefaultTenantStreams, code, msg)
				}
				closers = append(closers, closeIt)
			}
			closers[0]() // acme closes one: it may open one again
			closers = closers[1:]
			deadline := time.Now().Add(5 * time.Second)
			for {
				code, msg, closeIt := open(path, "wdn_acme-viewer-0123456789")
				if code == 200 {
					closers = append(closers, closeIt)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after acme closed a stream: %d %s", code, msg)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestAttackStreamOfRemovedToken: a runs or approvals stream opened with a
// token (or its console session) that a reload then removes ends, as a
// new request with it is refused; the stream of a token the reload keeps
// goes on.
func TestAttackStreamOfRemovedToken(t *testing.T) {
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	c := &auth.Config{}
	for _, name := range []string{"gone", "kept"} {
		h, err := auth.ParseHash(auth.Hash("wdn_" + name + "-0123456789"))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: name, SHA256: h, Scopes: auth.Read, Tenant: "acme"})
	}
	sessions := auth.NewSessions(bytes.Repeat([]byte{9}, auth.SessionKeySize), c)
	cookie, _ := sessions.Issue(c.Tokens[0])
	done := make(chan struct{})
	srv := httptest.NewServer(New(Options{Store: st, Approvals: m, Done: done,
		Security: Security{Auth: c, Sessions: sessions}}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	// stream opens a stream and returns a channel closed when it ends.
	stream := func(path, token, cookie string) <-chan struct{} {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
		t.Cleanup(func() { resp.Body.Close() })
		return ended
	}
	var gone, kept []<-chan struct{}
	for _, path := range []string{"/api/runs/stream", "/api/approvals/stream"} {
		gone = append(gone, stream(path, "wdn_gone-0123456789", ""), stream(path, "", cookie))
		kept = append(kept, stream(path, "wdn_kept-0123456789", ""))
	}
	time.Sleep(100 * time.Millisecond)
	c.Replace(auth.Config{Tokens: c.Tokens[1:]})
	for i, ended := range gone {
		select {
		case <-ended:
		case <-time.After(3 * time.Second):
			t.Errorf("stream %d of the removed token still open 3s after the reload", i)
		}
	}
	for i, ended := range kept {
		select {
		case <-ended:
			t.Errorf("stream %d of the kept token ended", i)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
