package auth

import "testing"

func TestCanonicalOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8787":  "http://localhost:8787",
		"HTTPS://A.example":      "https://a.example:443",
		"http://[::1]":           "http://[::1]:80",
		"https://a.example:8443": "https://a.example:8443",
		"null":                   "",
		"file://x":               "",
		"https://u@a.example":    "",
		"https://a.example/?q=1": "",
	} {
		got, ok := CanonicalOrigin(in)
		if got != want || ok != (want != "") {
			t.Errorf("CanonicalOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
