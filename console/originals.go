package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/detect"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/unseal"

	"github.com/wardenhq/warden"
)

// Who sees originals (the values the trace's redaction replaced, kept
// sealed beside each record):
//
//   - a viewer with the unseal scope (admin implies it; without auth,
//     everyone): the decision page (input, output, views, reason, results)
//     and its diff, the approvals queue and an approval's page;
//   - a viewer with the approve scope: the approvals it may decide (those of
//     its tenant, pending or decided, as the approvals API shows them) on the
//     queue and their pages, their summary, reason, event and tool revealed
//     from the asking record, and the decision page of a record such an
//     approval names (asking, deciding, or the retry that used it);
//   - anyone else: the redacted form, as stored.
//
// Every page that shows originals goes through the unseal Service, which
// records the unseal (who, which record, when, from where, via "console")
// before anything is shown, and says so on the page.

// via is the Viewer.Via of the console's unseals.
const via = "console"

// shown is what a page says about the originals it shows (the zero value:
// none, nothing to say).
type shown struct {
	// Values counts the originals shown; Erased those whose keys were
	// destroyed (forget, retention) and Failed those that did not open
	// otherwise: both stay redacted.
	Values, Erased, Failed int
	// Err says why originals the viewer may see are not shown.
	Err string
}

// add sums o into s.
func (s *shown) add(o shown) {
	s.Values += o.Values
	s.Erased += o.Erased
	s.Failed += o.Failed
	if s.Err == "" {
		s.Err = o.Err
	}
}

// Any reports whether the page has something to say about originals.
func (s shown) Any() bool { return s.Values > 0 || s.Erased > 0 || s.Failed > 0 || s.Err != "" }

// unsealViewer is the request's viewer as the unseal Service records it.
func unsealViewer(r *http.Request) unseal.Viewer {
	p := warden.PrincipalFrom(r.Context())
	return unseal.Viewer{Name: p.Name, Tenant: p.Tenant, From: r.RemoteAddr, Via: via}
}

// mayReveal reports whether v may see the originals of an approval's
// texts: the unseal scope, or approve (the approval is of v's tenant: the
// console reads approvals with its tenant). The approvals API
// (server/approvals_unseal.go) applies the same rule.
func (v viewer) mayReveal() bool { return v.CanUnseal || v.CanApprove }

// open opens rec's originals for the request's viewer, recording the
// unseal. A failure is logged and said on the page; nothing is shown then.
func (c *Console) open(ctx context.Context, r *http.Request, rec *audit.Record) (redact.Opened, shown) {
	if c.o.Unseal == nil || len(rec.Sealed) == 0 {
		return redact.Opened{}, shown{}
	}
	opened, err := c.o.Unseal.Open(ctx, unsealViewer(r), rec)
	if err != nil {
		c.log.Warn("console: unsealing", "record", rec.ID, "err", err)
		msg := "Originals not shown: they could not be opened, or the unseal could not be recorded."
		if errors.Is(err, unseal.ErrOtherTenant) {
			msg = "Originals not shown: the record belongs to another tenant."
		}
		return redact.Opened{}, shown{Err: msg}
	}
	if opened.Err != nil {
		c.log.Warn("console: opening sealed originals", "record", rec.ID, "failed", opened.Failed, "err", opened.Err)
	}
	return opened, shown{Values: len(opened.Originals), Erased: opened.Erased, Failed: opened.Failed}
}

// revealRecord returns rec with its originals for the request's viewer
// (rec itself when there are none to show).
func (c *Console) revealRecord(ctx context.Context, r *http.Request, rec *audit.Record) (*audit.Record, shown) {
	opened, s := c.open(ctx, r, rec)
	if len(opened.Originals) == 0 {
		return rec, s
	}
	return redact.Reveal(rec, opened.Originals), s
}

// mayRevealRecord reports whether the request's viewer may see rec's
// originals: with the unseal scope, or with approve when rec is the asking
// (or deciding, or retrying) record of an approval of its tenant.
func (c *Console) mayRevealRecord(ctx context.Context, v viewer, rec *audit.Record) bool {
	if v.CanUnseal {
		return true
	}
	if !v.CanApprove || rec.ApprovalID == "" || c.o.Approvals == nil {
		return false
	}
	a, err := c.o.Approvals.Get(ctx, rec.ApprovalID, v.Tenant)
	if err != nil {
		if !errors.Is(err, approval.ErrApprovalNotFound) {
			c.log.Warn("console: reading the approval of a record", "record", rec.ID, "approval", rec.ApprovalID, "err", err)
		}
		return false
	}
	return a.RecordID == rec.ID || a.DecisionRecordID == rec.ID || a.UsedRecordID == rec.ID
}

// revealApproval returns a copy of a with its summary, reason, event and
// tool revealed from the asking record (a itself when there is nothing to
// show). The record is read, and an unseal recorded, only when one of
// those texts holds a mark. The caller has checked that the viewer may see
// them (mayReveal).
func (c *Console) revealApproval(ctx context.Context, r *http.Request, a *approval.Approval) (*approval.Approval, shown) {
	marked := hasMark(a.Summary) || hasMark(a.Reason) || hasMark(a.Event) || hasMark(a.Tool)
	if c.o.Unseal == nil || c.o.Store == nil || a.RecordID == "" || !marked {
		return a, shown{}
	}
	rec, err := findRecord(ctx, c.o.Store, a.RecordID, warden.PrincipalFrom(r.Context()).Tenant)
	if errors.Is(err, errNoRecord) {
		return a, shown{} // not (yet) in the trace: nothing to open
	}
	if err != nil {
		c.log.Warn("console: reading an approval's record", "approval", a.ID, "record", a.RecordID, "err", err)
		return a, shown{Err: "Originals not shown: reading the asking record failed."}
	}
	opened, s := c.open(ctx, r, rec)
	if len(opened.Originals) == 0 {
		return a, s
	}
	cp := *a
	cp.Summary = redact.RevealString(cp.Summary, opened.Originals)
	cp.Reason = redact.RevealString(cp.Reason, opened.Originals)
	cp.Event = redact.RevealString(cp.Event, opened.Originals)
	cp.Tool = redact.RevealString(cp.Tool, opened.Originals)
	return &cp, s
}

// hasMark reports whether s holds a redaction mark.
func hasMark(s string) bool { return strings.Contains(s, detect.RedactedPrefix) }

// unsealRow is an unseal or forget record as the unseals list and the
// session timeline show it.
type unsealRow struct {
	ID       string
	Event    string // unseal.EventUnseal or EventForget
	Decision string // allow, or deny for a refused unseal
	Refused  bool
	Who      string // "" without auth
	Tenant   string
	// Record is the record unsealed (unseal); Session the session erased
	// (forget).
	Record, Session string
	// Values counts the originals shown; Keys the keys a forget destroyed.
	Values, Keys int
	From, Via    string
	Reason       string
	Time         time.Time
}

// isUnseal reports whether rec records an unseal or an erasure (not a
// step an agent took).
func isUnseal(rec *audit.Record) bool { return rec.Surface == unseal.Surface }

// unsealRowOf is an unseal or forget record as an unsealRow.
func unsealRowOf(rec *audit.Record) unsealRow {
	u := unsealRow{ID: rec.ID, Event: rec.Event, Decision: rec.Decision, Refused: rec.Decision == warden.Deny.String(),
		Who: rec.Caller, Tenant: rec.Tenant, Session: rec.SessionID, Reason: rec.Reason, Time: rec.Time}
	var in struct {
		Record  string `json:"record"`
		Session string `json:"session"`
		Values  int    `json:"values"`
		Keys    int    `json:"keys_destroyed"`
		Via     string `json:"via"`
		From    string `json:"from"`
	}
	if json.Unmarshal(rec.Input, &in) == nil {
		u.Record, u.Values, u.Keys, u.Via, u.From = in.Record, in.Values, in.Keys, in.Via, in.From
		if in.Session != "" {
			u.Session = in.Session
		}
	}
	return u
}
