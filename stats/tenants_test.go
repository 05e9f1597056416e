package stats

import (
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// tenantDecision is decision's for a caller of tenant.
func tenantDecision(tenant string, v warden.Verdict, lat time.Duration, tool, policy string) (*warden.Event, *warden.Outcome, error) {
	ev, out, err := decision(v, lat, tool, policy, warden.Result{PolicyID: policy, Mode: "enforce"})
	ev.Principal.Tenant = tenant
	return ev, out, err
}

// A tenant's figures are its callers' decisions only; "" is every
// decision's; a tenant that did not decide has none. A day later the
// tenants' counts are reused, zeroed.
func TestTenantCounts(t *testing.T) {
	c := newClock(t0)
	o := New(c.now)
	for range 3 {
		o.Observe(tenantDecision("acme", warden.Deny, 10*time.Microsecond, "acme-tool", "acme-policy"))
	}
	o.Observe(tenantDecision("beta", warden.Deny, 5*time.Second, "beta-tool", "beta-policy"))
	o.Observe(tenantDecision("", warden.Allow, time.Microsecond, "ls", "shared"))
	rec := &audit.Record{Tool: "[REDACTED]", Tenant: "beta"}
	ev, out, _ := tenantDecision("beta", warden.Deny, 5*time.Second, "secret", "beta-policy")
	o.ObserveRecord(t.Context(), ev, out, rec, nil)

	acme, beta, all := o.Summary("acme", time.Hour, 10), o.Summary("beta", time.Hour, 10), o.Summary("", time.Hour, 10)
	if acme.Outcomes.Total() != 3 || beta.Outcomes.Total() != 2 || all.Outcomes.Total() != 6 {
		t.Fatalf("totals acme %d, beta %d, all %d", acme.Outcomes.Total(), beta.Outcomes.Total(), all.Outcomes.Total())
	}
	if fmt.Sprint(acme.DeniedTools, acme.DeniedPolicies) != "[{acme-tool 3}] [{acme-policy 3}]" {
		t.Errorf("acme's most denied: %v %v", acme.DeniedTools, acme.DeniedPolicies)
	}
	if fmt.Sprint(beta.DeniedTools) != "[{[REDACTED] 1} {beta-tool 1}]" || len(beta.Policies) != 1 || beta.Policies["beta-policy"].Matched != 2 {
		t.Errorf("beta: %v %v", beta.DeniedTools, beta.Policies)
	}
	if acme.P99 >= time.Millisecond || beta.P50 < time.Second {
		t.Errorf("latencies mixed: acme p99 %v, beta p50 %v", acme.P99, beta.P50)
	}
	if s := o.Summary("gamma", time.Hour, 10); s.Outcomes.Total() != 0 || len(s.DeniedTools) != 0 || len(s.Policies) != 0 {
		t.Errorf("a tenant that did not decide: %+v", s)
	}
	if pts := o.Series("acme", 2); pts[1].Outcomes[Deny] != 3 || pts[1].P99 >= time.Millisecond {
		t.Errorf("acme's series: %+v", pts[1])
	}
	if pts := o.Series("gamma", 2); pts[1].Outcomes.Total() != 0 || pts[1].P50 != 0 {
		t.Errorf("gamma's series: %+v", pts[1])
	}

	// A day later, the minute is reused: nothing of the day before; the
	// tenants' counts come from the spares.
	c.add(24 * time.Hour)
	o.Observe(tenantDecision("beta", warden.Allow, time.Microsecond, "x", "y"))
	if a, b := o.Summary("acme", time.Minute, 10), o.Summary("beta", time.Minute, 10); a.Outcomes.Total() != 0 || b.Outcomes.Total() != 1 || len(b.DeniedTools) != 0 {
		t.Errorf("a day later: acme %+v, beta %+v", a, b)
	}
	allocs := testing.AllocsPerRun(100, func() {
		o.Observe(tenantDecision("beta", warden.Deny, time.Microsecond, "x", "y"))
	})
	if allocs > 2 { // the test's own event and outcome
		t.Errorf("a known tenant's decision allocates %v", allocs)
	}
}

// Past MaxTenants tenants in a minute, a tenant's decisions are in the
// totals only; the next minute counts it again.
func TestTenantsBounded(t *testing.T) {
	c := newClock(t0)
	o := New(c.now)
	for i := range MaxTenants + 5 {
		o.Observe(tenantDecision(fmt.Sprint("t", i), warden.Deny, time.Microsecond, "tool", "p"))
	}
	if s := o.Summary("", time.Minute, 1); s.Outcomes.Total() != MaxTenants+5 {
		t.Errorf("total %d", s.Outcomes.Total())
	}
	if s := o.Summary(fmt.Sprint("t", MaxTenants-1), time.Minute, 1); s.Outcomes.Total() != 1 {
		t.Errorf("the last tenant counted: %d", s.Outcomes.Total())
	}
	late := fmt.Sprint("t", MaxTenants)
	if s := o.Summary(late, time.Minute, 1); s.Outcomes.Total() != 0 {
		t.Errorf("a tenant past the bound: %d", s.Outcomes.Total())
	}
	c.add(time.Minute)
	o.Observe(tenantDecision(late, warden.Deny, time.Microsecond, "tool", "p"))
	if s := o.Summary(late, time.Minute, 1); s.Outcomes.Total() != 1 {
		t.Errorf("the next minute: %d", s.Outcomes.Total())
	}
}

// BenchmarkObserveTenant is Observe for a caller with a tenant: the
// totals and the tenant's counts.
func BenchmarkObserveTenant(b *testing.B) {
	o := New(nil)
	ev, out, _ := tenantDecision("acme", warden.Deny, 42*time.Microsecond, "http_post", "no-secrets")
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(ev, out, nil)
	}
}
