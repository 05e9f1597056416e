package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/stats"
)

// policyRow is one policy of the policies page.
type policyRow struct {
	P            *policy.Policy
	Events       string
	Audit        bool
	Source       string // file:line
	Hour, Day    stats.PolicyCount
	CountsKnown  bool
	DecisionName string
}

// policiesData is the policies page.
type policiesData struct {
	Tenant   string
	Tenants  []string
	Choose   bool // the viewer may pick a tenant's set
	Revision string
	Sources  []string
	Status   policy.ReloadStatus
	Rows     []policyRow
	Err      string
	// Shadow is the set's shadow set and where it disagreed with the live
	// decisions (nil: none).
	Shadow *shadowData
}

// policies serves the policies in force: the viewer's tenant's set (or,
// for a viewer without a tenant, the shared set or ?tenant='s), with each
// policy's source, mode and how often it matched and decided in the last
// hour and day — in the decisions of the set's tenant (of every caller for
// the shared set) — and the set's shadow set, if any, with where it
// disagreed with the live decisions of the last day.
func (c *Console) policies(w http.ResponseWriter, r *http.Request) {
	d := policiesData{Tenants: c.o.Tenants}
	p := page{Title: "Policies", Nav: "policies", Data: &d}
	if c.o.Policies == nil {
		c.fail(w, r, http.StatusServiceUnavailable, "No policies: the console runs without a Guardian.")
		return
	}
	d.Tenant = warden.PrincipalFrom(r.Context()).Tenant
	if d.Tenant == "" {
		d.Choose = len(c.o.Tenants) > 0
		if t := r.URL.Query().Get("tenant"); t != "" {
			if !slices.Contains(c.o.Tenants, t) {
				c.fail(w, r, http.StatusNotFound, "No tenant "+t+" is declared.")
				return
			}
			d.Tenant = t
		}
	}
	set := c.o.Policies.Policies()
	if d.Tenant != "" {
		set = c.o.Policies.TenantPolicies(d.Tenant)
	}
	if set == nil {
		c.fail(w, r, http.StatusNotFound, "No policy set for tenant "+d.Tenant+".")
		return
	}
	d.Revision, d.Sources, d.Status = set.Revision(), set.Sources(), c.o.Policies.ReloadStatus(d.Tenant)
	var hour, day stats.Summary
	if c.o.Stats != nil {
		hour, day = c.o.Stats.Summary(d.Tenant, time.Hour, 0), c.o.Stats.Summary(d.Tenant, 24*time.Hour, 0)
	}
	for _, pol := range set.Policies() {
		row := rowOfPolicy(pol)
		row.Hour, row.Day, row.CountsKnown = hour.Policies[pol.ID], day.Policies[pol.ID], c.o.Stats != nil
		d.Rows = append(d.Rows, row)
	}
	d.Shadow = c.shadowSection(r.Context(), d.Tenant)
	c.render(w, r, http.StatusOK, "policies", p)
}
