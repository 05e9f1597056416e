package server

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
)

// /metrics counts every tenant's decisions: a token with a tenant cannot
// read it (403), one without can.
func TestMetricsServerWide(t *testing.T) {
	c := testAuth(t)
	const acmeRead = "wdn_acme-viewer-0123456789"
	h, err := auth.ParseHash(auth.Hash(acmeRead))
	if err != nil {
		t.Fatal(err)
	}
	c.Tokens = append(c.Tokens, auth.Token{Name: "acme-viewer", SHA256: h, Scopes: auth.Read, Tenant: "acme"})
	srv, _ := newGuarded(t, Security{Auth: c})
	if w := call(srv, "GET", "/metrics", acmeRead, ""); w.Code != 403 || !strings.Contains(w.Body.String(), "every tenant") {
		t.Errorf("a tenant's read token: %d %s, want 403", w.Code, w.Body)
	}
	if w := call(srv, "GET", "/metrics", tokRead, ""); w.Code != 200 || !strings.Contains(w.Body.String(), "go_goroutines") {
		t.Errorf("a read token without a tenant: %d %.200s, want 200", w.Code, w.Body)
	}
}
