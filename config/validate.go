package config

import (
	"errors"
	"fmt"

	"github.com/wardenhq/warden/conf"
)

// Validate checks the rules that span sections, once every section is
// decoded: client certificates need the CA that verifies them
// (auth.clients, tls.client_ca), and a credential's tenant must be
// declared when tenants: declares any (checkTenants).
func (c *Config) Validate() error {
	var errs []error
	if len(c.Auth.Clients) > 0 && c.TLS.ClientCA == "" {
		errs = append(errs, conf.Errorf("auth.clients", "needs tls.client_ca (the CA that verifies the client certificates)"))
	}
	errs = append(errs, c.checkTenants()...)
	return errors.Join(errs...)
}

// checkTenants refuses a token or client whose tenant `tenants:` does not
// declare, when it declares any: a misspelt tenant would otherwise be
// decided by the shared set alone, without the tenant's policies.
func (c *Config) checkTenants() []error {
	if len(c.Tenants) == 0 {
		return nil
	}
	names := c.TenantNames()
	var errs []error
	check := func(what, tenant string) {
		if _, ok := c.Tenants[tenant]; tenant != "" && !ok {
			errs = append(errs, fmt.Errorf("%s: tenant %q is not declared under tenants: (declared: %v)", what, tenant, names))
		}
	}
	for _, t := range c.Auth.Tokens {
		check("auth.tokens "+t.Name, t.Tenant)
	}
	for _, cl := range c.Auth.Clients {
		check("auth.clients "+cl.Subject, cl.Tenant)
	}
	return errs
}

// joined lists the errors err joins (errors.Join), or err itself.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
