package backend

import (
	"errors"
	"net/url"
	"strings"
)

// CheckStoreURL reports whether s is a PostgreSQL URL warden can open
// (postgres:// or postgresql:// with a host), the form of the config's
// store: key and of --store (docs/scaling.md). Its error never quotes a
// password.
func CheckStoreURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return errors.New("expected a postgres:// URL")
	}
	if u.Host == "" && !strings.Contains(u.RawQuery, "host=") {
		return errors.New("expected a postgres:// URL with a host")
	}
	return nil
}
