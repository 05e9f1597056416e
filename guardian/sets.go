package guardian

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/pipeline"
	"github.com/wardenhq/warden/policy"
)

// The policy sets of a Guardian: the shared one and each tenant's, each
// with its pipeline and its shadow set; which one decides a caller's step,
// and what the console and `warden check` read of them.

// buildPipeline builds the set's pipeline: shared are the features every
// set shares (the trace, its record filter, the approvals, the sessions'
// labels, the observer); the set adds its chain and hook router, its async
// hooks (run by pool, which every set shares) and its shadow set.
func (s *set) buildPipeline(shared pipeline.Options, pool *hooks.Pool) {
	o := shared
	o.Chain = warden.NewChain(s.def, warden.Step{Name: "policy", Kind: hooks.KindPolicy, Handler: s.engine})
	o.Router = s.router.Chain
	o.Views = catalog.Views
	o.Async = hooks.Async{Router: s.router, Pool: pool}
	if s.shadow != nil {
		o.Shadow = s.shadow
	}
	s.dec = pipeline.New(o)
}

// newShadow compiles a shadow set of the pack (unless left out), the
// shadow paths and extra (a tenant's policies); nil without shadow paths.
func (g *Guardian) newShadow(extra []string, def warden.Verdict) (*shadowSet, error) {
	if len(g.shadowPaths) == 0 {
		return nil, nil
	}
	paths := append(append([]string(nil), g.shadowPaths...), extra...)
	return newShadow(policy.Spec{Builtin: g.builtin, Paths: paths}, def, g.log)
}

// ErrUnknownTenant is returned for a step whose caller names a tenant that
// the config's tenants: does not declare (when it declares any): deciding it
// by the shared set alone would skip the tenant's policies.
var ErrUnknownTenant = errors.New("unknown tenant")

// setFor picks the policy set of the step's caller: its tenant's, or the
// shared one for a caller without a tenant (or when no tenants are
// declared: a tenant is then only a label on records and reads).
func (g *Guardian) setFor(ctx context.Context, ev *warden.Event) (*set, error) {
	tenant := ev.Principal.Tenant
	if p := warden.PrincipalFrom(ctx); p != (warden.Principal{}) {
		tenant = p.Tenant
	}
	if tenant == "" || g.tenants == nil {
		return g.set, nil
	}
	if s, ok := g.tenants[tenant]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownTenant, tenant)
}

// Policies returns the shared policy set in force (callers without a
// tenant of their own).
func (g *Guardian) Policies() *policy.Set { return g.engine.Set() }

// TenantPolicies returns the policy set in force for tenant's callers: the
// shared set plus the tenant's policies; nil for a tenant that is not
// declared.
func (g *Guardian) TenantPolicies(tenant string) *policy.Set {
	if s, ok := g.tenants[tenant]; ok {
		return s.engine.Set()
	}
	return nil
}

// ReloadStatus returns when tenant's policy set ("" for the shared one)
// was loaded and how its last reload went; the zero value for a tenant that
// is not declared.
func (g *Guardian) ReloadStatus(tenant string) policy.ReloadStatus {
	if tenant == "" {
		return g.engine.Status()
	}
	if s, ok := g.tenants[tenant]; ok {
		return s.engine.Status()
	}
	return policy.ReloadStatus{}
}

// ShadowPolicies returns the shadow set in force for tenant's callers (""
// for callers without a tenant); nil without a shadow set, or for a
// tenant that is not declared.
func (g *Guardian) ShadowPolicies(tenant string) *policy.Set {
	if s := g.setNamed(tenant); s != nil && s.shadow != nil {
		return s.shadow.engine.Set()
	}
	return nil
}

// ShadowReloadStatus is ReloadStatus for tenant's shadow set; the zero
// value without one.
func (g *Guardian) ShadowReloadStatus(tenant string) policy.ReloadStatus {
	if s := g.setNamed(tenant); s != nil && s.shadow != nil {
		return s.shadow.engine.Status()
	}
	return policy.ReloadStatus{}
}

// setNamed is tenant's set ("": the shared one); nil for a tenant that is
// not declared.
func (g *Guardian) setNamed(tenant string) *set {
	if tenant == "" {
		return g.set
	}
	return g.tenants[tenant]
}

// PolicyPaths returns the policy files and directories besides the pack.
func (g *Guardian) PolicyPaths() []string { return append([]string(nil), g.paths...) }
