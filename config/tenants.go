package config

import (
	"fmt"
	"sort"

	"github.com/wardenhq/warden"
	"gopkg.in/yaml.v3"
)

// Tenant is one entry of `tenants:`: the policies its callers are decided
// by on top of the shared set, and its default decision.
type Tenant struct {
	// Name is the tenant's name, as a token's or client's tenant names it.
	Name string
	// Policies are policy files or directories, resolved relative to the
	// config file, added to the shared set (the built-in pack and the
	// config's policies) for this tenant's callers.
	Policies []string
	// DefaultDecision applies when nothing decides a tenant's step; Abstain
	// means the config's defaultDecision.
	DefaultDecision warden.Verdict
}

// parseTenants reads `tenants: {NAME: {policies: [...], defaultDecision: allow|deny}}`.
func parseTenants(file string, v *yaml.Node) (map[string]Tenant, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	out := map[string]Tenant{}
	if v.Kind != yaml.MappingNode {
		add(v, "tenants: expected a mapping of tenant names to {policies, defaultDecision}")
		return out, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		where := "tenants." + k.Value
		if !validName(k.Value) {
			add(k, "%s: a name may hold letters, digits, '-', '_' and '.'", where)
			continue
		}
		if _, dup := out[k.Value]; dup {
			add(k, "%s: declared twice", where)
			continue
		}
		t := Tenant{Name: k.Value}
		if n.Kind != yaml.MappingNode {
			add(n, "%s: expected {policies: [...], defaultDecision: allow|deny}", where)
			continue
		}
		for j := 0; j+1 < len(n.Content); j += 2 {
			fk, fv := n.Content[j], n.Content[j+1]
			switch fk.Value {
			case "policies":
				ps, perrs := parsePaths(file, where+".policies", fv)
				errs = append(errs, perrs...)
				t.Policies = append(t.Policies, ps...)
			case "defaultDecision":
				d, err := warden.ParseVerdict(fv.Value)
				if err != nil || (d != warden.Allow && d != warden.Deny) || fv.Kind != yaml.ScalarNode {
					add(fv, "%s.defaultDecision: expected allow or deny, got %q", where, fv.Value)
					continue
				}
				t.DefaultDecision = d
			default:
				add(fk, "%s: unknown key %q (want policies, defaultDecision)", where, fk.Value)
			}
		}
		out[k.Value] = t
	}
	return out, errs
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
