package config

import (
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/hooks"
)

// parseStore reads `store: postgres://…` (docs/scaling.md): a PostgreSQL URL,
// ${VAR}s expanded so that a password can come from the environment.
func parseStore(v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", fmt.Errorf("expected a postgres:// URL")
	}
	s, err := hooks.ExpandEnv(v.Value)
	if err != nil {
		return "", err
	}
	return s, CheckStoreURL(s)
}

// CheckStoreURL reports whether s is a PostgreSQL URL warden can open
// (postgres:// or postgresql:// with a host), the form of `store:` and
// --store. Its error never quotes a password.
func CheckStoreURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("expected a postgres:// URL")
	}
	if u.Host == "" && !strings.Contains(u.RawQuery, "host=") {
		return fmt.Errorf("expected a postgres:// URL with a host")
	}
	return nil
}
