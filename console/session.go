package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// maxSessionApprovals bounds the approvals a session's timeline lists.
const maxSessionApprovals = 200

// step is one entry of a session's timeline: a decision, an approval, or
// an unseal of one of its records (or the erasure of its originals).
type step struct {
	Time     time.Time
	Row      *row
	Approval *approval.Approval
	Unseal   *unsealRow
}

// sessionData is a session's timeline page.
type sessionData struct {
	ID    string
	Steps []step
	// Decisions is the number of decisions on this page; Later is the
	// cursor of the next page ("": this is the last).
	Decisions int
	Later     string
	Cursor    string
	Err       string
}

// LaterLink is the link of the next page.
func (d sessionData) LaterLink() string {
	return "/sessions/" + url.PathEscape(d.ID) + "?after=" + url.QueryEscape(d.Later)
}

// session serves one session's timeline: its decisions in the order they
// were recorded, PageSize a page, every guardian's result and the input of
// each, with the session's approvals inline where they were created.
func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d := sessionData{ID: id, Cursor: r.URL.Query().Get("after")}
	p := page{Title: "Session " + cut(id, 24), Nav: "decisions", Data: &d}
	if c.o.Store == nil {
		c.fail(w, r, http.StatusServiceUnavailable, "no trace: warden runs without a store")
		return
	}
	tenant := warden.PrincipalFrom(r.Context()).Tenant
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	recs, err := audit.Collect(ctx, c.o.Store, audit.Query{Session: id, Oldest: true, After: d.Cursor, Tenant: tenant}, PageSize+1)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, audit.ErrUnknownCursor) {
			code = http.StatusBadRequest
		}
		d.Err = "reading the trace: " + err.Error()
		c.render(w, r, code, "session", p)
		return
	}
	if len(recs) > PageSize {
		recs = recs[:PageSize]
		d.Later = recs[PageSize-1].ID
	}
	d.Decisions = len(recs)
	var approvals []approval.Approval
	if c.o.Approvals != nil {
		approvals, err = c.o.Approvals.List(ctx, approval.ApprovalQuery{Session: id, Tenant: tenant, Limit: maxSessionApprovals})
		if err != nil {
			d.Err = "listing the session's approvals: " + err.Error()
		}
	}
	// Approvals go where they were created, among this page's decisions:
	// from the page's first decision (any time on the first page) to the
	// next page's (any time on the last).
	var from, to time.Time
	if d.Cursor != "" && len(recs) > 0 {
		from = recs[0].Time
	}
	if d.Later != "" {
		to = recs[len(recs)-1].Time
	}
	d.Steps = make([]step, 0, len(recs)+len(approvals))
	ai := len(approvals) - 1 // approvals are newest first
	add := func(before time.Time, last bool) {
		for ; ai >= 0; ai-- {
			a := &approvals[ai]
			if !last && !a.Created.Before(before) {
				return
			}
			if (from.IsZero() || !a.Created.Before(from)) && (to.IsZero() || a.Created.Before(to)) {
				d.Steps = append(d.Steps, step{Time: a.Created, Approval: a})
			}
		}
	}
	for i := range recs {
		add(recs[i].Time, false)
		if isUnseal(&recs[i]) {
			u := unsealRowOf(&recs[i])
			d.Steps = append(d.Steps, step{Time: u.Time, Unseal: &u})
			continue
		}
		rw := rowOf(&recs[i])
		rw.InputExcerpt = excerpt(recs[i].Input)
		d.Steps = append(d.Steps, step{Time: rw.Time, Row: &rw})
	}
	add(time.Time{}, true)
	c.render(w, r, http.StatusOK, "session", p)
}
