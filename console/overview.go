package console

import (
	"context"
	"net/http"
	"time"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/stats"
)

// Instances lists the replicas sharing the store (fleet.Registry).
type Instances interface {
	List(ctx context.Context) (fleet.Fleet, error)
}

// overviewTop is how many denied tools and policies the overview lists.
const overviewTop = 8

// maxOverviewApprovals bounds the approvals the pending chart reads.
const maxOverviewApprovals = approval.MaxListLimit

// overviewData is the overview page.
type overviewData struct {
	Since         time.Time
	Hour          stats.Summary
	Total, Denied uint64
	Rate          string
	Charts        []*chart
	Tops          []*hbars
	Pending       []approval.Approval
	PendingMore   bool
	NoStats       bool
	Err           string
	// Fleet are the replicas (nil: not shown); Differ counts the live
	// ones running a policy revision other than most.
	Fleet  *fleet.Fleet
	Differ int
}

// overview serves the last hour at a glance: decisions per second by
// outcome, p50/p99 latency, the most denied tools and policies, and the
// pending approvals, as charts drawn here in SVG. A viewer with a tenant
// sees its tenant's decisions and approvals only; one without, every
// tenant's (as the runs API).
func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	d := overviewData{}
	p := page{Title: "Overview", Nav: "overview", Data: &d}
	tenant := warden.PrincipalFrom(r.Context()).Tenant
	var pts []stats.Point
	if c.o.Stats == nil {
		d.NoStats = true
		pts = make([]stats.Point, 60)
		now := c.o.Now().UTC().Truncate(time.Minute)
		for i := range pts {
			pts[i].Time = now.Add(time.Duration(i-59) * time.Minute)
		}
	} else {
		pts = c.o.Stats.Series(tenant, 60)
		d.Hour = c.o.Stats.Summary(tenant, time.Hour, overviewTop)
		d.Since = d.Hour.Since
		d.Total, d.Denied = d.Hour.Outcomes.Total(), d.Hour.Outcomes[stats.Deny]
		d.Rate = trimFloat(float64(d.Total) / 3600)
	}
	d.Charts = append(d.Charts, rateChart(pts), latencyChart(pts))
	d.Tops = append(d.Tops, topChart("Most denied tools", d.Hour.DeniedTools, "o-deny"),
		topChart("Most denied policies", d.Hour.DeniedPolicies, "o-deny"))
	if c.o.Approvals != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
		defer cancel()
		recent, err := c.o.Approvals.List(ctx, approval.ApprovalQuery{Tenant: tenant, Limit: maxOverviewApprovals})
		if err != nil {
			d.Err = "listing approvals: " + err.Error()
		}
		d.Charts = append(d.Charts, pendingChart(pts, recent))
		for i := len(recent) - 1; i >= 0; i-- {
			if a := recent[i]; a.State == approval.ApprovalPending {
				if len(d.Pending) == 10 {
					d.PendingMore = true
					break
				}
				d.Pending = append(d.Pending, a)
			}
		}
	}
	if c.o.Instances != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
		defer cancel()
		f, err := c.o.Instances.List(ctx)
		if err != nil {
			d.Err = "listing the replicas: " + err.Error()
		} else {
			d.Fleet = &f
			for _, in := range f.Instances {
				if in.PolicyDiffers {
					d.Differ++
				}
			}
		}
	}
	c.render(w, r, http.StatusOK, "overview", p)
}
