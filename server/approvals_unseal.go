package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/detect"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/unseal"
)

// originals reveals what an approval shows — its summary, reason, event
// and tool, redacted as the trace is — from the sealed originals of the
// record that asked it (Approval.RecordID).
type originals struct {
	store audit.Store
	svc   *unseal.Service
}

// approvalView is an approval as GET /api/approvals/{id} gives it: the
// approval, and the input of the step that asked it (the asking record's),
// revealed for a caller that may see originals. Input is absent when the
// record is not in the trace (pruned) or the approval names none.
type approvalView struct {
	approval.Approval
	Input json.RawMessage `json:"input,omitempty"`
}

// approvalsUnseal reads the unseal= of an approvals GET: whether its
// answer shows originals. A caller that may decide approvals (or has the
// unseal scope, or no auth is configured) sees them unless it asks
// unseal=0; a read-only caller asking unseal=1 is refused (403), as is
// unseal=1 on a server without sealed originals (409); a bad value is 400.
func approvalsUnseal(w http.ResponseWriter, r *http.Request, svc *unseal.Service) (open, ok bool) {
	may := mayOpenApprovals(r)
	open, err := parseUnseal(r.URL.Query()["unseal"], may)
	switch {
	case err != nil:
		httpError(w, http.StatusBadRequest, err.Error())
		return false, false
	case open && !may:
		s, _ := callerScopes(r)
		httpError(w, http.StatusForbidden, fmt.Sprintf("forbidden: %s (scopes %s) lacks the approve and unseal scopes: the originals of an approval are shown to those who may decide it; ask without unseal=1 for it redacted",
			warden.PrincipalFrom(r.Context()).Name, s))
		return false, false
	case open && svc == nil && r.URL.Query().Has("unseal"):
		httpError(w, http.StatusConflict, msgSealingOff)
		return false, false
	}
	return open && svc != nil, true
}

// reveal reveals a's texts in place from the originals of its asking
// record, opened for v (recorded by the unseal Service), when open; with
// input, it returns the asking record's input (revealed when open). The
// record is read only when something would be shown from it: the list
// (input false) opens only the records of approvals whose texts hold a
// mark. A record of another tenant than a's is not a's: it is ignored.
func (or originals) reveal(ctx context.Context, v unseal.Viewer, a *approval.Approval, open, input bool, count *unsealCount) (json.RawMessage, error) {
	marked := hasMark(a.Summary) || hasMark(a.Reason) || hasMark(a.Event) || hasMark(a.Tool)
	if a.RecordID == "" || or.store == nil || !input && !(open && marked) {
		return nil, nil
	}
	recs, err := audit.Collect(ctx, or.store, audit.Query{ID: a.RecordID, Tenant: a.Tenant}, 1)
	if err != nil {
		return nil, fmt.Errorf("reading the asking record of approval %s: %w", a.ID, err)
	}
	if len(recs) == 0 || recs[0].Tenant != a.Tenant {
		return nil, nil // pruned
	}
	rec := &recs[0]
	in := rec.Input
	if !open || or.svc == nil || !marked && !hasMark(string(in)) {
		return in, nil
	}
	opened, err := or.svc.Open(ctx, v, rec)
	if err != nil {
		return nil, err
	}
	count.add(opened)
	o := opened.Originals
	a.Summary = redact.RevealString(a.Summary, o)
	a.Reason = redact.RevealString(a.Reason, o)
	a.Event = redact.RevealString(a.Event, o)
	a.Tool = redact.RevealString(a.Tool, o)
	return redact.RevealJSON(in, o), nil
}

func hasMark(s string) bool { return strings.Contains(s, detect.RedactedPrefix) }
