package main

import (
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/config"
)

// configReload is what a SIGHUP reloads from the config file besides the
// policies: the credentials (auth.tokens, auth.clients). Everything else
// in the file is read at start only, and a reload says which of its keys
// changed and need a restart.
type configReload struct {
	file    string         // --config; "" without one (nothing to reload)
	started map[string]any // the file's top-level keys as read at start (topKeys)
	auth    *auth.Config   // the credentials in force: every request is checked against them
	authOn  bool           // auth was on at start
	tenants []string       // the tenants whose policies are loaded
}

// newConfigReload remembers the config cfg, read from file at start.
func newConfigReload(file string, cfg *config.Config) *configReload {
	c := &configReload{file: file, auth: &cfg.Auth, authOn: cfg.Auth.Enabled(), tenants: cfg.TenantNames()}
	if file != "" {
		c.started = topKeys(file)
	}
	return c
}

// reload re-reads the config file and puts its credentials in force, so a
// removed token (and its console sessions) stops working and a new one
// works. It logs what changed, by name (never a token or its hash), and,
// at WARN, what it could not apply: a file that does not load (nothing
// changes), turning authentication on or off, credentials of a tenant
// that was not there at start (they are left out), and the other keys
// that changed (they need a restart).
func (c *configReload) reload(log *slog.Logger) {
	if c.file == "" {
		return
	}
	next, err := config.Load(c.file)
	if err != nil {
		log.Warn("config not reloaded: the credentials in force (auth.tokens, auth.clients) stay as they were", "config", c.file, "err", err)
		return
	}
	if keys := restartKeys(c.started, topKeys(c.file)); len(keys) > 0 {
		log.Warn("config changes that need a restart (only auth.tokens, auth.clients and the policy files reload)", "config", c.file, "keys", strings.Join(keys, ","))
	}
	switch on := next.Auth.Enabled(); {
	case c.authOn && !on:
		log.Warn("auth not reloaded: the config has no auth.tokens or auth.clients left, and turning authentication off needs a restart; the credentials in force stay as they were", "config", c.file)
		return
	case !c.authOn && on:
		log.Warn("auth not reloaded: turning authentication on (auth.tokens, auth.clients) needs a restart", "config", c.file)
		return
	case !on:
		return // no auth before, none now
	}
	creds := next.Auth
	creds.Tokens = slices.DeleteFunc(slices.Clone(creds.Tokens), func(t auth.Token) bool {
		return c.newTenant(log, "token "+t.Name, t.Tenant)
	})
	creds.Clients = slices.DeleteFunc(slices.Clone(creds.Clients), func(cl auth.Client) bool {
		return c.newTenant(log, "client "+cl.Subject, cl.Tenant)
	})
	if len(creds.Tokens) == 0 && len(creds.Clients) == 0 {
		log.Warn("auth not reloaded: no credential would be left, and turning authentication off needs a restart; the credentials in force stay as they were", "config", c.file)
		return
	}
	ch := c.auth.Replace(creds)
	if ch.Empty() {
		log.Info("auth reloaded: no change", "tokens", len(creds.Tokens), "clients", len(creds.Clients))
		return
	}
	log.Info("auth reloaded", "tokens", len(creds.Tokens), "clients", len(creds.Clients),
		"added", strings.Join(ch.Added, ","), "removed", strings.Join(ch.Removed, ","), "changed", strings.Join(ch.Changed, ","))
}

// newTenant reports (and logs) a credential whose tenant was not there at
// start: its policies are not loaded, so it is left out until a restart.
func (c *configReload) newTenant(log *slog.Logger, what, tenant string) bool {
	if tenant == "" || slices.Contains(c.tenants, tenant) {
		return false
	}
	log.Warn("auth reload: "+what+" left out: its tenant is new, and a new tenant needs a restart", "tenant", tenant)
	return true
}

// topKeys reads the config file's top-level keys and their values as
// plain data (maps, lists, scalars): what its author wrote, without
// comments or positions, to compare between reloads. nil for a file that
// does not read.
func topKeys(file string) map[string]any {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return nil
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// restartKeys lists the top-level keys whose value differs between the
// file as read at start and next, auth aside: they take effect at the
// next start only.
func restartKeys(started, next map[string]any) []string {
	if started == nil || next == nil {
		return nil
	}
	var keys []string
	for k, v := range next {
		if w, ok := started[k]; k != "auth" && (!ok || !reflect.DeepEqual(v, w)) {
			keys = append(keys, k)
		}
	}
	for k := range started {
		if _, ok := next[k]; k != "auth" && !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
