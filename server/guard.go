package server

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/console"
)

// Security is what every surface asks of a request before it is routed
// (docs/security.md). The zero value leaves authentication off; the browser
// checks (Origin, Content-Type) are always on.
type Security struct {
	// Auth are the accepted bearer tokens; nil or empty: no authentication.
	Auth *auth.Config
	// Origins are browser origins allowed besides the same origin, in
	// auth.CanonicalOrigin form.
	Origins []string
	// Sessions, with Auth on, lets the console's session cookie stand for
	// a token (nil: bearer tokens and client certificates only).
	Sessions *auth.Sessions
}

// guard applies sec in front of next, in this order, so that nothing is
// decided, dispatched or forwarded for a refused request:
//
//  1. a request with an Origin header that is neither the request's own
//     origin nor one of sec.Origins: 403 (a web page driving warden);
//  2. with auth on, a request without a valid credential: 401 with
//     WWW-Authenticate: Bearer (a browser asking for a console page, Accept
//     text/html, is sent to the sign-in page instead); a credential without the scope
//     the surface needs: 403 (see needScope). The credential is a bearer
//     token; without an Authorization header, a verified client
//     certificate auth.clients names, or the console's session cookie. A
//     request authenticated by the cookie that is not a GET or HEAD must
//     carry a same-origin Origin header (403 otherwise): with SameSite=
//     Strict and JSON-only POSTs, that is the console's CSRF defence. The
//     token and the session cookie are then removed from the request, so no
//     gateway forwards them upstream, and the principal goes in the context
//     (warden.WithPrincipal) for the trace, its scopes too
//     (auth.WithScopes) for the console. On a JSON-RPC surface a 401 or
//     403 (here or in 1.) carries a JSON-RPC error body as well (refuse);
//  3. a POST whose Content-Type is not application/json: 415 (a browser's
//     "simple request" cannot send application/json without a preflight).
//
// A refusal with a request body closes the connection after it, without
// reading the rest of the body (closeUnread): the guard answers before the
// body deadline would bound a client that trickles it.
func guard(sec Security, rs routes, next http.Handler) http.Handler {
	authOn := sec.Auth.Enabled()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins, ok := r.Header["Origin"]; ok && !originAllowed(r, origins, sec.Origins) {
			refuse(w, r, rs.jsonRPC(r), http.StatusForbidden, "forbidden: Origin "+quoteFirst(origins)+" is not allowed (same origin, or the config's origins:)")
			return
		}
		if authOn {
			need, open := needScope(rs, r)
			if !open {
				tok, how := credential(sec, r)
				if how == "" {
					if sec.Sessions != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
						console.IsPage(r.URL.Path) && strings.Contains(r.Header.Get("Accept"), "text/html") {
						// A browser without a session signs in first.
						closeUnread(w, r)
						http.Redirect(w, r, console.LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
						return
					}
					challenge := `Bearer realm="warden"`
					if r.Header.Get("Authorization") != "" {
						challenge += `, error="invalid_token"`
					}
					w.Header().Set("WWW-Authenticate", challenge)
					refuse(w, r, rs.jsonRPC(r), http.StatusUnauthorized, "unauthorized: a valid bearer token is required (Authorization: Bearer <token>)")
					return
				}
				if how == viaCookie && r.Method != http.MethodGet && r.Method != http.MethodHead && !auth.SameOrigin(r) {
					refuse(w, r, rs.jsonRPC(r), http.StatusForbidden, "forbidden: a request signed in with the session cookie must carry a same-origin Origin header")
					return
				}
				// An approver may read the approvals it decides without read.
				if !tok.Scopes.Allows(need) && !(need == auth.Read && isApprovals(r) && tok.Scopes.Allows(auth.Approve)) {
					refuse(w, r, rs.jsonRPC(r), http.StatusForbidden, "forbidden: "+how+" "+tok.Name+" lacks the "+need.String()+" scope")
					return
				}
				ctx := r.Context()
				if _, stream := tenantStreamPaths[r.URL.Path]; stream {
					ctx = context.WithValue(ctx, recheckKey{}, recheck(sec, r, tok, how))
				}
				r.Header.Del("Authorization")
				dropSessionCookie(r)
				ctx = warden.WithPrincipal(ctx, warden.Principal{Name: tok.Name, Tenant: tok.Tenant})
				r = r.WithContext(auth.WithScopes(ctx, tok.Scopes))
			}
		}
		if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
			refuseHTTP(w, r, http.StatusUnsupportedMediaType, "unsupported media type: a POST must be Content-Type: application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// How a request authenticated (credential's second result; "" for not).
const (
	viaToken  = "token"
	viaCert   = "client certificate"
	viaCookie = "session"
)

// credential returns the token r authenticates as, and how: a bearer
// token; without one, a client certificate the configured CA verified whose
// subject auth.clients names; without an Authorization header, the
// console's session cookie.
func credential(sec Security, r *http.Request) (auth.Token, string) {
	if tok, ok := sec.Auth.Lookup(bearer(r)); ok {
		return tok, viaToken
	}
	if cl, ok := sec.Auth.LookupSubject(verifiedSubject(r)); ok {
		return auth.Token{Name: cl.Subject, Scopes: cl.Scopes, Tenant: cl.Tenant}, viaCert
	}
	if sec.Sessions != nil && r.Header.Get("Authorization") == "" {
		if c, err := r.Cookie(auth.SessionCookie); err == nil {
			if tok, ok := sec.Sessions.Check(c.Value); ok {
				return tok, viaCookie
			}
		}
	}
	return auth.Token{}, ""
}

// recheckKey is the context key of a stream request's recheck function.
type recheckKey struct{}

// recheck returns a function that reports whether the credential r
// authenticated with (as tok, how) still stands for tok, with the same
// scopes and tenant: after a reload (auth.Config.Replace) a stream opened
// with a credential that is gone or changed ends (endRevoked).
func recheck(sec Security, r *http.Request, tok auth.Token, how string) func() bool {
	b, subject, cookie := bearer(r), verifiedSubject(r), ""
	if c, err := r.Cookie(auth.SessionCookie); err == nil {
		cookie = c.Value
	}
	return func() bool {
		var now auth.Token
		ok := false
		switch how {
		case viaToken:
			now, ok = sec.Auth.Lookup(b)
		case viaCert:
			var cl auth.Client
			cl, ok = sec.Auth.LookupSubject(subject)
			now = auth.Token{Name: cl.Subject, Scopes: cl.Scopes, Tenant: cl.Tenant}
		case viaCookie:
			now, ok = sec.Sessions.Check(cookie)
		}
		return ok && now.Name == tok.Name && now.Scopes == tok.Scopes && now.Tenant == tok.Tenant
	}
}

// dropSessionCookie removes the console's session cookie from r's Cookie
// headers, keeping the others (a gateway forwards them upstream).
func dropSessionCookie(r *http.Request) {
	if _, err := r.Cookie(auth.SessionCookie); err != nil {
		return
	}
	var keep []string
	for _, c := range r.Cookies() {
		if c.Name != auth.SessionCookie {
			keep = append(keep, c.String())
		}
	}
	r.Header.Del("Cookie")
	if len(keep) > 0 {
		r.Header.Set("Cookie", strings.Join(keep, "; "))
	}
}

// verifiedSubject is the subject of the client certificate the TLS
// handshake verified against tls.client_ca ("" without one).
func verifiedSubject(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return ""
	}
	return r.TLS.VerifiedChains[0][0].Subject.String()
}

// needScope is the scope a request needs, or open for /healthz. A
// surface's route says what it needs (Route.Scope); the server's own
// paths, and a path no route claims, need:
//
//	open:    /healthz, /readyz; the console's sign-in page, static files and session
//	         API (GET /login, GET /static/*, POST /api/session[/logout])
//	approve: POST /api/approvals/{id} (and, besides read, GET /api/approvals...
//	         and the console's approvals pages)
//	read:    GET /api/*, the console's pages, GET /metrics
//	admin:   everything else (/debug/pprof, ...); admin also grants all of the above
//
// Paths are taken as sent: one that is not clean is only ever redirected by
// the mux, never served, and the redirect is checked again.
func needScope(rs routes, r *http.Request) (need auth.Scope, open bool) {
	p := r.URL.Path
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case p == "/healthz" || p == "/readyz":
		return 0, true
	case read && console.IsPublic(p):
		return 0, true
	case r.Method == http.MethodPost && (p == console.SessionPath || p == console.LogoutPath):
		return 0, true
	}
	if need, ok := rs.need(r); ok {
		return need, false
	}
	switch {
	case strings.HasPrefix(p, "/api/approvals/") && r.Method == http.MethodPost:
		return auth.Approve, false
	case read && (strings.HasPrefix(p, "/api/") || console.IsPage(p) || p == "/metrics"):
		return auth.Read, false
	}
	return auth.Admin, false
}

// isApprovals reports whether r reads the approvals API or the console's
// approvals pages.
func isApprovals(r *http.Request) bool {
	return r.URL.Path == "/api/approvals" || strings.HasPrefix(r.URL.Path, "/api/approvals/") || console.IsApprovalPage(r.URL.Path)
}

// bearer is the token of an "Authorization: Bearer <token>" header, or "".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return ""
	}
	return strings.TrimSpace(h[len(scheme):])
}

// originAllowed reports whether the request's Origin (one header value) is
// its own origin — the scheme it arrived on and its Host — or an allowed
// one. "null", a malformed or a repeated Origin is not.
func originAllowed(r *http.Request, origins, allowed []string) bool {
	if len(origins) != 1 {
		return false
	}
	if auth.SameOrigin(r) {
		return true
	}
	o, ok := auth.CanonicalOrigin(origins[0])
	return ok && slices.Contains(allowed, o)
}

// isJSON reports whether a Content-Type is application/json (parameters
// such as charset allowed).
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func quoteFirst(v []string) string {
	if len(v) == 0 {
		return `""`
	}
	s := v[0]
	if len(s) > 100 {
		s = s[:100]
	}
	return strconv.Quote(s)
}
