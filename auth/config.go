package auth

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
)

// The auth: section (docs/security.md) is a Config decoded by conf: its
// tokens and clients, each checked by its Validate, and the rules across
// entries in Config.Validate. origins: is Origins and tls: is TLS.

// Sum is a token's SHA-256, as auth.tokens[].sha256 holds it (64 hex
// digits, either case).
type Sum [sha256.Size]byte

// UnmarshalConf reads the hex digits (ParseHash).
func (s *Sum) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("expected the token's sha256 as 64 hex digits")
	}
	sum, err := ParseHash(n.Value)
	if err != nil {
		return err
	}
	*s = sum
	return nil
}

// UnmarshalConf reads a list of scope names (ParseScope) into their union.
func (s *Scope) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("expected a list of %s", strings.Join(ScopeNames(), ", "))
	}
	var out Scope
	var errs []error
	for _, it := range n.Content {
		if it.Kind != yaml.ScalarNode {
			errs = append(errs, fmt.Errorf("expected a list of %s", strings.Join(ScopeNames(), ", ")))
			continue
		}
		sc, err := ParseScope(it.Value)
		if err != nil {
			errs = append(errs, err)
		}
		out |= sc
	}
	*s = out
	return errors.Join(errs...)
}

// plaintext is the key token: of an auth.tokens entry, always refused.
type plaintext struct{}

func (plaintext) UnmarshalConf(*yaml.Node) error {
	return errors.New("the config holds the token's sha256, never the token (warden token new prints it)")
}

// Validate checks one auth.tokens entry: its name and scopes are required
// (its sha256 is a required key), and the names are names
// (conf.CheckName).
func (t *Token) Validate() error {
	var errs []error
	if t.Name == "" {
		errs = append(errs, conf.Errorf("", "name is required"))
	} else if err := conf.CheckName(t.Name); err != nil {
		errs = append(errs, conf.Errorf("name", "%q: %v", t.Name, err))
	}
	errs = append(errs, checkGrant(t.Scopes, t.Tenant)...)
	return errors.Join(errs...)
}

// Validate checks one auth.clients entry: its subject and scopes are
// required, and its tenant is a name.
func (c *Client) Validate() error {
	var errs []error
	if c.Subject == "" {
		errs = append(errs, conf.Errorf("", "subject is required (a certificate subject, e.g. \"CN=payments-agent\")"))
	}
	errs = append(errs, checkGrant(c.Scopes, c.Tenant)...)
	return errors.Join(errs...)
}

// checkGrant checks what a token or client grants: at least one scope, and
// a tenant that is a name when one is given.
func checkGrant(s Scope, tenant string) []error {
	var errs []error
	if s == 0 {
		errs = append(errs, conf.Errorf("scopes", "expected at least one of %s", strings.Join(ScopeNames(), ", ")))
	}
	if tenant != "" {
		if err := conf.CheckName(tenant); err != nil {
			errs = append(errs, conf.Errorf("tenant", "%q: %v", tenant, err))
		}
	}
	return errs
}

// Validate checks the rules across entries of a decoded Config (before it
// is in use): one entry per token name, per token sha256 and per client
// subject.
func (c *Config) Validate() error {
	var errs []error
	names := map[string]bool{}
	sums := map[Sum]string{}
	for i, t := range c.Tokens {
		if t.Name != "" && names[t.Name] {
			errs = append(errs, conf.Errorf(fmt.Sprintf("tokens[%d].name", i), "%q is used by another token", t.Name))
		}
		names[t.Name] = true
		if t.SHA256 == (Sum{}) {
			continue
		}
		if other, dup := sums[t.SHA256]; dup {
			errs = append(errs, conf.Errorf(fmt.Sprintf("tokens[%d].sha256", i), "is the same as token %q's (one token, one entry)", other))
		} else {
			sums[t.SHA256] = t.Name
		}
	}
	subjects := map[string]bool{}
	for i, cl := range c.Clients {
		if cl.Subject != "" && subjects[cl.Subject] {
			errs = append(errs, conf.Errorf(fmt.Sprintf("clients[%d].subject", i), "%q is listed twice", cl.Subject))
		}
		subjects[cl.Subject] = true
	}
	return errors.Join(errs...)
}

// Origins are the browser origins allowed besides the same origin
// (origins:), each kept in its canonical form scheme://host:port
// (CanonicalOrigin).
type Origins []string

// UnmarshalConf reads a list of origins.
func (o *Origins) UnmarshalConf(n *yaml.Node) error {
	var list []string
	if err := n.Decode(&list); err != nil {
		return errors.New("expected a list of origins (scheme://host[:port])")
	}
	var out Origins
	var errs []error
	for _, s := range list {
		c, ok := CanonicalOrigin(s)
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not an origin: expected http(s)://host[:port] with no path", s))
			continue
		}
		out = append(out, c)
	}
	*o = out
	return errors.Join(errs...)
}
