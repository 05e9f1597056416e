package config

import (
	"strings"
	"testing"
)

func TestStoreKey(t *testing.T) {
	t.Setenv("WARDEN_TEST_PGPASS", "s3cret")
	for _, tt := range []struct {
		yaml, want, err string
	}{
		{`store: "postgres://warden@127.0.0.1:5432/warden?sslmode=disable"`, "postgres://warden@127.0.0.1:5432/warden?sslmode=disable", ""},
		{`store: postgresql://db.internal/warden`, "postgresql://db.internal/warden", ""},
		{`store: "postgres://warden:${WARDEN_TEST_PGPASS}@h/w"`, "postgres://warden:s3cret@h/w", ""},
		{`store: "sqlite:///var/lib/warden"`, "", "x.yaml:1: store: expected a postgres:// URL"},
		{`store: "postgres:///warden"`, "", "x.yaml:1: store: expected a postgres:// URL with a host"},
		{`store: [a]`, "", "x.yaml:1: store: expected a postgres:// URL"},
		{`store:`, "", "x.yaml:1: store: expected a postgres:// URL"},
		{`defaultDecision: allow`, "", ""},
	} {
		c, err := Parse("x.yaml", []byte(tt.yaml))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.yaml, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.yaml, err)
			continue
		}
		if c.Store != tt.want {
			t.Errorf("%s: Store = %q, want %q", tt.yaml, c.Store, tt.want)
		}
	}
}
