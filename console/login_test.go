package console

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
)

const (
	tokOps    = "wdn_ops-0123456789"
	tokAgents = "wdn_agents-0123456789"
)

func signInConsole(t *testing.T) (*Console, *auth.Sessions) {
	t.Helper()
	cfg := &auth.Config{}
	for _, e := range []struct {
		name, tok string
		s         auth.Scope
	}{{"ops", tokOps, auth.Read | auth.Approve}, {"agents", tokAgents, auth.Decide}} {
		h, _ := auth.ParseHash(auth.Hash(e.tok))
		cfg.Tokens = append(cfg.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: e.s})
	}
	s := auth.NewSessions(bytes.Repeat([]byte{1}, auth.SessionKeySize), cfg)
	return New(Options{Auth: cfg, Sessions: s}), s
}

func TestSignIn(t *testing.T) {
	c, sessions := signInConsole(t)
	post := func(path, origin, body string, overTLS bool) *httptest.ResponseRecorder {
		scheme := "http"
		if overTLS {
			scheme = "https"
		}
		r := httptest.NewRequest("POST", scheme+"://warden.test:8787"+path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if overTLS {
			r.TLS = &tls.ConnectionState{}
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		return w
	}
	const self = "http://warden.test:8787"
	tests := []struct {
		name, origin, body string
		want               int
	}{
		{"no Origin", "", `{"token":"` + tokOps + `"}`, 403},
		{"another origin", "https://evil.example", `{"token":"` + tokOps + `"}`, 403},
		{"unknown token", self, `{"token":"wdn_nope"}`, 401},
		{"a decide-only token", self, `{"token":"` + tokAgents + `"}`, 403},
		{"not the expected body", self, `{"token":"` + tokOps + `","x":1}`, 400},
		{"empty token", self, `{"token":""}`, 400},
		{"ok", self, `{"token":"` + tokOps + `"}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(SessionPath, tt.origin, tt.body, false)
			if w.Code != tt.want {
				t.Fatalf("%d, want %d: %s", w.Code, tt.want, w.Body)
			}
			cookies := w.Result().Cookies()
			if tt.want != 200 {
				if len(cookies) != 0 {
					t.Errorf("a refused sign-in set a cookie")
				}
				return
			}
			if len(cookies) != 1 {
				t.Fatalf("cookies %v", cookies)
			}
			ck := cookies[0]
			if ck.Name != auth.SessionCookie || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
				t.Errorf("cookie attributes: %+v", ck)
			}
			if strings.Contains(ck.Value, tokOps) || strings.Contains(ck.Value, auth.Hash(tokOps)) {
				t.Errorf("the cookie holds the token")
			}
			if ck.MaxAge < int(auth.SessionTTL.Seconds())-5 || ck.MaxAge > int(auth.SessionTTL.Seconds()) {
				t.Errorf("max-age %d", ck.MaxAge)
			}
			if tok, ok := sessions.Check(ck.Value); !ok || tok.Name != "ops" {
				t.Errorf("the cookie does not check: %v %v", tok, ok)
			}
		})
	}
	if w := post(SessionPath, "https://warden.test:8787", `{"token":"`+tokOps+`"}`, true); w.Code != 200 || !w.Result().Cookies()[0].Secure {
		t.Errorf("over TLS: %d, cookie %+v", w.Code, w.Result().Cookies())
	}
	w := post(LogoutPath, self, `{}`, false)
	if ck := w.Result().Cookies(); w.Code != 200 || len(ck) != 1 || ck[0].MaxAge >= 0 || ck[0].Value != "" {
		t.Errorf("sign-out: %d %v", w.Code, ck)
	}
	// Without auth there is nothing to sign in to.
	open := New(Options{})
	r := httptest.NewRequest("POST", self+SessionPath, strings.NewReader(`{"token":"x"}`))
	r.Header.Set("Origin", self)
	w = httptest.NewRecorder()
	open.ServeHTTP(w, r)
	if w.Code != 404 {
		t.Errorf("sign-in without auth: %d", w.Code)
	}
}
