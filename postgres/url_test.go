package postgres

import (
	"strings"
	"testing"
)

// FuzzRedactURL: redactURL never panics and never returns a URL's password.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h/db", "postgres://h/db", "", "://@", "postgres://u:p@ss@h:5432/db?sslmode=disable",
		"postgresql://:pw@h", "x@y://u:pw@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		out := redactURL(url)
		scheme := strings.Index(url, "://")
		at := strings.LastIndexByte(url, '@')
		if scheme < 0 || at < scheme {
			return
		}
		userinfo := url[scheme+3 : at]
		i := strings.IndexByte(userinfo, ':')
		if i < 0 {
			return
		}
		if pw := userinfo[i+1:]; pw != "" && pw != "xxxxx" && strings.Contains(out[scheme+3:], ":"+pw+"@") {
			t.Fatalf("redactURL(%q) = %q keeps the password", url, out)
		}
	})
}

// TestOpenBadURL fails precisely, without a connection attempt.
func TestOpenBadURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"", `postgres: "" is not a postgres:// URL`},
		{"mysql://u:pw@h/db", `postgres: "mysql://u:xxxxx@h/db" is not a postgres:// URL`},
		{"postgres://u:pw@h:notaport/db", "postgres: parse store URL postgres://u:xxxxx@h:notaport/db: invalid"},
	} {
		_, err := Open(t.Context(), tt.url, Options{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Open(%q) = %v, want %q", tt.url, err, tt.want)
		}
	}
}
