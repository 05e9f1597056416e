package auth

import (
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
