package server

import (
	"bufio"
	"context"
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
	srv := httptest.NewServer(New(Options{AOS: http.NotFoundHandler(), Store: st, Approvals: m, Security: Security{Auth: c}, Done: done}))
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
