package auth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// CanonicalOrigin returns origin as scheme://host:port in lower case, the
// port made explicit (80, 443), or false when origin is not an http(s)
// origin (a path, query, user info or "null" is not).
func CanonicalOrigin(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	return u.Scheme + "://" + HostPort(u.Host, u.Scheme), true
}

// HostPort returns host (a Host header or URL host) in lower case with the
// scheme's default port added when it has none.
func HostPort(host, scheme string) string {
	host = strings.ToLower(host)
	if u, err := url.Parse("//" + host); err == nil && u.Port() == "" {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		return strings.TrimSuffix(host, ":") + ":" + port
	}
	return host
}

// SameOrigin reports whether r carries exactly one Origin header naming
// the origin r arrived at: the scheme it came on (https with TLS) and its
// Host. A request without an Origin is not same-origin.
func SameOrigin(r *http.Request) bool {
	v := r.Header.Values("Origin")
	if len(v) != 1 {
		return false
	}
	o, ok := CanonicalOrigin(v[0])
	if !ok {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return o == scheme+"://"+HostPort(r.Host, scheme)
}

type scopesKey struct{}

// WithScopes returns ctx carrying the scopes the request's credential
// grants (the server's guard sets it when auth is on).
func WithScopes(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopesKey{}, s)
}

// ScopesFrom returns the scopes WithScopes put in ctx; false when there
// are none (no auth: everything is open).
func ScopesFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopesKey{}).(Scope)
	return s, ok
}
