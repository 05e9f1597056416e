package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/jsonrpc"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/jsonstrict"
	"github.com/wardenhq/warden/sse"
)

// maxApprovalBody bounds a POST /api/approvals/{id} body.
const maxApprovalBody = 16 << 10

// maxDecidedReason bounds an approver's reason, in bytes.
const maxDecidedReason = 2000

// streamHeartbeat is how often an idle stream sends a comment, so
// proxies and clients see it alive.
const streamHeartbeat = 15 * time.Second

// approvalsRoutes serves the approvals API (docs/approvals.md) from m; with
// m nil (no trace that keeps approvals) every route answers 503. The GETs
// show an approval's texts with the originals of its asking record to
// callers that may decide it (or), redacted to the others.
func approvalsRoutes(mux *http.ServeMux, m *approval.Manager, or originals) {
	if m == nil {
		off := func(w http.ResponseWriter, r *http.Request) {
			httpError(w, http.StatusServiceUnavailable, "approvals are off: warden runs without a trace (--data)")
		}
		mux.HandleFunc("/api/approvals", off)
		mux.HandleFunc("/api/approvals/", off)
		return
	}
	mux.HandleFunc("GET /api/approvals", func(w http.ResponseWriter, r *http.Request) { listApprovals(w, r, m, or) })
	mux.HandleFunc("GET /api/approvals/stream", func(w http.ResponseWriter, r *http.Request) { streamApprovals(w, r, m) })
	mux.HandleFunc("GET /api/approvals/{id}", func(w http.ResponseWriter, r *http.Request) {
		open, ok := approvalsUnseal(w, r, or.svc)
		if !ok {
			return
		}
		a, err := m.Get(r.Context(), r.PathValue("id"), warden.PrincipalFrom(r.Context()).Tenant)
		if err != nil {
			approvalError(w, err, nil)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		var count unsealCount
		input, err := or.reveal(ctx, viewerOf(r), a, open, true, &count)
		if err != nil {
			unsealError(w, a.RecordID, err)
			return
		}
		if open {
			count.setHeaders(w.Header())
		}
		jsonrpc.WriteValue(w, http.StatusOK, approvalView{Approval: *a, Input: input})
	})
	mux.HandleFunc("POST /api/approvals/{id}", func(w http.ResponseWriter, r *http.Request) { decideApproval(w, r, m) })
}

// listApprovals serves GET /api/approvals?state=&session=&after=&limit=&unseal=:
// newest first, {"approvals": [...], "next_cursor": "..."}; each revealed
// for a caller that may (or).
func listApprovals(w http.ResponseWriter, r *http.Request, m *approval.Manager, or originals) {
	open, ok := approvalsUnseal(w, r, or.svc)
	if !ok {
		return
	}
	q := r.URL.Query()
	aq := approval.ApprovalQuery{Session: q.Get("session"), After: q.Get("after"), Limit: approval.DefaultListLimit,
		Tenant: warden.PrincipalFrom(r.Context()).Tenant}
	if s := q.Get("state"); s != "" {
		switch st := approval.ApprovalState(s); st {
		case approval.ApprovalPending, approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired:
			aq.State = st
		default:
			httpError(w, http.StatusBadRequest, fmt.Sprintf("state: expected pending, approved, denied or expired, got %q", s))
			return
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > approval.MaxListLimit {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("limit: expected an integer in 1..%d, got %q", approval.MaxListLimit, s))
			return
		}
		aq.Limit = n
	}
	// One more than asked tells whether there is a next page.
	want := aq.Limit
	aq.Limit++
	list, err := m.List(r.Context(), aq)
	if err != nil {
		if errors.Is(err, audit.ErrUnknownCursor) {
			httpError(w, http.StatusBadRequest, "after: no approval with that id")
			return
		}
		httpError(w, http.StatusInternalServerError, "listing approvals: "+err.Error())
		return
	}
	next := ""
	if len(list) > want {
		list = list[:want]
		next = list[want-1].ID
	}
	if open {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		var count unsealCount
		v := viewerOf(r)
		for i := range list {
			if _, err := or.reveal(ctx, v, &list[i], true, false, &count); err != nil {
				unsealError(w, list[i].RecordID, err)
				return
			}
		}
		count.setHeaders(w.Header())
	}
	jsonrpc.WriteValue(w, http.StatusOK, map[string]any{"approvals": list, "next_cursor": next})
}

// decideApproval serves POST /api/approvals/{id} with {"decision":
// "approve"|"deny", "reason": "..."}: 200 with the approval as decided, 409
// with it when it was already decided or expired.
func decideApproval(w http.ResponseWriter, r *http.Request, m *approval.Manager) {
	var body struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	// Strict decoding (jsonstrict.Decode): {"decision":"deny","Decision":
	// "approve"} is refused, not read as whichever key encoding/json takes.
	b, err := io.ReadAll(io.LimitReader(r.Body, maxApprovalBody+1))
	if err == nil && len(b) > maxApprovalBody {
		err = fmt.Errorf("more than %d bytes", maxApprovalBody)
	}
	if err == nil {
		err = jsonstrict.Decode(b, &body)
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, "body: expected {\"decision\": \"approve\"|\"deny\", \"reason\": \"...\"}: "+err.Error())
		return
	}
	var approve bool
	switch body.Decision {
	case "approve":
		approve = true
	case "deny":
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("decision: expected approve or deny, got %q", body.Decision))
		return
	}
	if len(body.Reason) > maxDecidedReason {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("reason: at most %d bytes", maxDecidedReason))
		return
	}
	// The decision is stored and recorded even if the approver hangs up.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), audit.RecordTimeout)
	defer cancel()
	a, err := m.Resolve(ctx, r.PathValue("id"), approve, warden.PrincipalFrom(r.Context()), body.Reason)
	if err != nil {
		approvalError(w, err, a)
		return
	}
	jsonrpc.WriteValue(w, http.StatusOK, a)
}

// approvalError answers a Manager error: 404 unknown, 409 already decided
// (with the approval as stored), 500 otherwise.
func approvalError(w http.ResponseWriter, err error, a *approval.Approval) {
	switch {
	case errors.Is(err, approval.ErrApprovalNotFound):
		httpError(w, http.StatusNotFound, "no approval with that id")
	case errors.Is(err, approval.ErrSelfApproval):
		httpError(w, http.StatusForbidden, "forbidden: "+err.Error())
	case errors.Is(err, approval.ErrApprovalDecided):
		msg := "approval already decided or expired"
		if a != nil {
			msg = fmt.Sprintf("approval already %s", a.State)
		}
		jsonrpc.WriteValue(w, http.StatusConflict, map[string]any{"error": msg, "approval": a})
	default:
		httpError(w, http.StatusInternalServerError, "approvals: "+err.Error())
	}
}

// streamApprovals serves GET /api/approvals/stream: Server-Sent Events,
// one "approval" event (the approval's JSON) per approval created or
// changed from now on, preceded by every pending one; a comment every
// streamHeartbeat. A tenant's caller gets its tenant's only. Streams are
// bounded (approval.MaxSubscribers: 503 beyond); one that falls behind is
// ended, to reconnect.
func streamApprovals(w http.ResponseWriter, r *http.Request, m *approval.Manager) {
	tenant := warden.PrincipalFrom(r.Context()).Tenant
	ch, cancel, ok := m.Subscribe()
	if !ok {
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many approval streams (at most %d)", approval.MaxSubscribers))
		return
	}
	defer cancel()
	pending, err := m.List(r.Context(), approval.ApprovalQuery{State: approval.ApprovalPending, Tenant: tenant, Limit: approval.MaxListLimit})
	if err != nil {
		httpError(w, http.StatusInternalServerError, "listing approvals: "+err.Error())
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(a approval.Approval) bool {
		b, err := json.Marshal(a)
		if err != nil {
			return false
		}
		if sse.Write(w, []string{"event: approval", "id: " + a.ID}, b) != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for i := len(pending) - 1; i >= 0; i-- { // oldest first, as they came
		if !send(pending[i]) {
			return
		}
	}
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case a, live := <-ch:
			if !live {
				return // fell behind: the client reconnects
			}
			if tenant != "" && a.Tenant != tenant {
				continue
			}
			if !send(a) {
				return
			}
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
