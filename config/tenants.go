package config

import (
	"errors"
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/conf"
)

// Tenant is one entry of `tenants:`: the policies its callers are decided
// by on top of the shared set, and its default decision.
type Tenant struct {
	// Name is the tenant's name, its key under tenants:, as a token's or
	// client's tenant names it.
	Name string
	// Policies are policy files or directories, resolved relative to the
	// config file, added to the shared set (the built-in pack and the
	// config's policies) for this tenant's callers.
	Policies []string `yaml:"policies" conf:"one"`
	// DefaultDecision applies when nothing decides a tenant's step; none
	// means the config's defaultDecision.
	DefaultDecision Decision `yaml:"defaultDecision"`
}

// Validate refuses an empty policy path.
func (t *Tenant) Validate() error {
	var errs []error
	for i, p := range t.Policies {
		if p == "" {
			errs = append(errs, conf.Errorf(fmt.Sprintf("policies[%d]", i), "empty path"))
		}
	}
	return errors.Join(errs...)
}

// Decision is a default decision as the config gives it: allow or deny.
// Its zero value is none.
type Decision warden.Verdict

// UnmarshalConf reads allow or deny.
func (d *Decision) UnmarshalConf(n *yaml.Node) error {
	v, err := warden.ParseVerdict(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || (v != warden.Allow && v != warden.Deny) {
		return fmt.Errorf("expected allow or deny, got %q", n.Value)
	}
	*d = Decision(v)
	return nil
}

// Verdict is the decision, warden.Abstain for none.
func (d Decision) Verdict() warden.Verdict { return warden.Verdict(d) }

// decodeTenants decodes `tenants: {NAME: {policies, defaultDecision}}`:
// each tenant by conf, its name checked at its key's line, its policies
// resolved against the config file's directory.
func decodeTenants(file, key string, v *yaml.Node, c *Config) ErrorList {
	errs := conf.Decode(file, key, v, &c.Tenants)
	if v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i]
			if err := conf.CheckName(k.Value); err != nil {
				errs.Add(file, k.Line, k.Column, "%s.%s: %v", key, k.Value, err)
			}
		}
	}
	for name, t := range c.Tenants {
		t.Name = name
		for i, p := range t.Policies {
			t.Policies[i] = inDir(file, p)
		}
		c.Tenants[name] = t
	}
	return errs
}

// TenantNames returns the declared tenants' names, sorted.
func (c *Config) TenantNames() []string {
	names := make([]string, 0, len(c.Tenants))
	for n := range c.Tenants {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
