package console

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/policy"
)

// Bounds of the policies page's count of where live and shadow disagreed.
const (
	// shadowWindow is how far back the count looks ("recent records").
	shadowWindow = 24 * time.Hour
	// maxDisagreements is the most disagreeing records it reads; past
	// it the count says "at least".
	maxDisagreements = 500
)

// shadowBudget bounds the time the count spends in the trace (the
// disagree filter is a column filter; the records it reads are the
// disagreeing ones).
var shadowBudget = 250 * time.Millisecond

// shadowData is the shadow set section of the policies page.
type shadowData struct {
	Revision string
	Sources  []string
	Status   policy.ReloadStatus
	Rows     []shadowRow
	// Disagreed is how many records of the last Window the shadow set
	// would have decided otherwise than the live decision recorded; Pairs
	// breaks it down by live → shadow verdict. Partial: the count stopped
	// (maxDisagreements, or its time budget), so it is a lower bound.
	Disagreed int
	Pairs     []verdictPair
	Partial   bool
	Window    string
	// Link is the decisions page filtered to those records.
	Link string
	Err  string
}

// shadowRow is one policy of the shadow set: the live table's columns, and
// in how many of the disagreeing records it matched and it decided the
// shadow verdict.
type shadowRow struct {
	policyRow
	Matched, Decided int
}

// verdictPair counts disagreeing records by live and shadow verdict.
type verdictPair struct {
	Live, Shadow string
	N            int
}

// shadowSection builds the shadow set's section for tenant's set (nil
// without a shadow set).
func (c *Console) shadowSection(ctx context.Context, tenant string) *shadowData {
	set := c.o.Policies.ShadowPolicies(tenant)
	if set == nil {
		return nil
	}
	d := &shadowData{Revision: set.Revision(), Sources: set.Sources(), Status: c.o.Policies.ShadowReloadStatus(tenant),
		Window: "24h"}
	v := url.Values{"disagree": {"shadow"}, "since": {d.Window}}
	d.Link = "/decisions?" + v.Encode()
	matched, decided := map[string]int{}, map[string]int{}
	if c.o.Store == nil {
		d.Err = "no trace: nothing to compare"
	} else {
		d.Err = c.countDisagreements(ctx, tenant, d, matched, decided)
	}
	for _, p := range set.Policies() {
		d.Rows = append(d.Rows, shadowRow{policyRow: rowOfPolicy(p), Matched: matched[p.ID], Decided: decided[p.ID]})
	}
	return d
}

// countDisagreements reads the recent records whose shadow verdict differs
// from the live one (Query.ShadowDisagrees) into d and the per-policy
// counts; it returns what went wrong, if anything.
func (c *Console) countDisagreements(ctx context.Context, tenant string, d *shadowData, matched, decided map[string]int) string {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	q := audit.Query{ShadowDisagrees: true, Tenant: tenant, Since: c.o.Now().Add(-shadowWindow), Budget: shadowBudget}
	pairs := map[[2]string]int{}
	err := c.o.Store.Scan(ctx, q, func(r *audit.Record) bool {
		d.Disagreed++
		for _, res := range r.Results {
			switch {
			case res.Mode != warden.ModeShadow:
			case res.Kind == warden.KindShadowSet:
				pairs[[2]string{r.Decision, res.Decision}]++
				if res.PolicyID != "" {
					decided[res.PolicyID]++
				}
			case res.PolicyID != "":
				matched[res.PolicyID]++
			}
		}
		if d.Disagreed >= maxDisagreements {
			d.Partial = true
			return false
		}
		return true
	})
	for k, n := range pairs {
		d.Pairs = append(d.Pairs, verdictPair{Live: k[0], Shadow: k[1], N: n})
	}
	slices.SortFunc(d.Pairs, func(a, b verdictPair) int {
		if a.N != b.N {
			return b.N - a.N
		}
		return strings.Compare(a.Live+" "+a.Shadow, b.Live+" "+b.Shadow)
	})
	var stopped *audit.ScanStopped
	if errors.As(err, &stopped) {
		d.Partial = true
		return ""
	}
	if err != nil {
		return "reading the trace: " + err.Error()
	}
	return ""
}

// rowOfPolicy is p as a row of the policies tables, without counts.
func rowOfPolicy(p *policy.Policy) policyRow {
	src := p.File
	if p.Line > 0 {
		src += ":" + strconv.Itoa(p.Line)
	}
	name := p.Decision.String()
	if name == "" && len(p.Labels) > 0 { // a policy that only labels the session
		name = "label " + strings.Join(p.Labels, ", ")
	}
	return policyRow{P: p, Events: strings.Join(p.Events, ", "), Audit: p.Mode == warden.Audit, Source: src,
		DecisionName: name}
}
