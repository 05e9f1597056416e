package console

import (
	"context"
	"errors"
	"net/http"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
)

// Bounds of the approvals page.
const (
	maxPending = 200
	maxDecided = 50
)

// approvalsData is the approvals page.
type approvalsData struct {
	Pending, Decided []approval.Approval
	// More is whether more pending approvals wait than are listed.
	More bool
	Err  string
	// Shown says what the queue shows of the originals of the pending
	// approvals' summaries and reasons.
	Shown shown
}

// approvals serves the approvals page: the pending queue, oldest first
// (the first to expire), with approve and deny, followed live; the most
// recently decided ones below.
func (c *Console) approvals(w http.ResponseWriter, r *http.Request) {
	d := approvalsData{}
	p := page{Title: "Approvals", Nav: "approvals", Data: &d}
	if c.o.Approvals == nil {
		c.fail(w, r, http.StatusServiceUnavailable, "Approvals are off: warden runs without a trace that keeps them.")
		return
	}
	tenant := warden.PrincipalFrom(r.Context()).Tenant
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	pending, err := c.o.Approvals.List(ctx, approval.ApprovalQuery{State: approval.ApprovalPending, Tenant: tenant, Limit: maxPending + 1})
	if err != nil {
		d.Err = "listing approvals: " + err.Error()
		c.render(w, r, http.StatusInternalServerError, "approvals", p)
		return
	}
	if len(pending) > maxPending {
		pending, d.More = pending[:maxPending], true
	}
	v := c.viewer(r)
	for i := len(pending) - 1; i >= 0; i-- {
		a := &pending[i]
		if v.mayReveal() {
			var sh shown
			a, sh = c.revealApproval(ctx, r, a)
			d.Shown.add(sh)
		}
		d.Pending = append(d.Pending, *a)
	}
	// The newest approvals, less the pending ones, are the decided ones;
	// with more pending than that, the decided ones come from further back.
	recent, err := c.o.Approvals.List(ctx, approval.ApprovalQuery{Tenant: tenant, Limit: maxDecided + len(pending)})
	if err != nil {
		d.Err = "listing approvals: " + err.Error()
	}
	for _, a := range recent {
		if a.Decided() && len(d.Decided) < maxDecided {
			d.Decided = append(d.Decided, a)
		}
	}
	p.Live = "approvals"
	c.render(w, r, http.StatusOK, "approvals", p)
}

// approvalData is one approval's page.
type approvalData struct {
	A *approval.Approval
	// Shown says what the page shows of the originals of its summary and
	// reason.
	Shown shown
}

// approval serves one approval: what notification links point to.
func (c *Console) approval(w http.ResponseWriter, r *http.Request) {
	if c.o.Approvals == nil {
		c.fail(w, r, http.StatusServiceUnavailable, "Approvals are off: warden runs without a trace that keeps them.")
		return
	}
	id := r.PathValue("id")
	a, err := c.o.Approvals.Get(r.Context(), id, warden.PrincipalFrom(r.Context()).Tenant)
	if errors.Is(err, approval.ErrApprovalNotFound) {
		c.fail(w, r, http.StatusNotFound, "There is no approval "+id+".")
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "reading the approval: "+err.Error())
		return
	}
	d := approvalData{A: a}
	if c.viewer(r).mayReveal() {
		ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
		defer cancel()
		d.A, d.Shown = c.revealApproval(ctx, r, a)
	}
	c.render(w, r, http.StatusOK, "approval", page{Title: "Approval " + cut(id, 13), Nav: "approvals", Live: "approval", Data: &d})
}
