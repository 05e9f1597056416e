package backend_test

import (
	"testing"

	"github.com/wardenhq/warden/backend"
)

func TestCheckStoreURL(t *testing.T) {
	for _, tc := range []struct{ url, err string }{
		{"postgres://warden@127.0.0.1:5432/warden?sslmode=disable", ""},
		{"postgresql://db.internal/warden", ""},
		{"postgres:///warden?host=/run/postgresql", ""},
		{"sqlite:///var/lib/warden", "expected a postgres:// URL"},
		{"/var/lib/warden", "expected a postgres:// URL"},
		{"postgres:///warden", "expected a postgres:// URL with a host"},
		{"postgres://u:s3cret@%zz/w", "expected a postgres:// URL"},
	} {
		got := ""
		if err := backend.CheckStoreURL(tc.url); err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("%s: error %q, want %q", tc.url, got, tc.err)
		}
	}
}
