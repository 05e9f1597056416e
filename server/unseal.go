package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/unseal"
)

// Sealed originals on the API (docs/runs-api.md, docs/approvals.md): the
// runs API shows them with ?unseal=1 to callers with the unseal scope,
// the approvals API to callers that may decide approvals. Every record
// opened is recorded by the unseal Service.

// viaAPI is the Viewer.Via of the API's unseals and erasures.
const viaAPI = "api"

// Headers of a response with ?unseal=1: how many values it shows revealed,
// and how many stayed redacted because their key was destroyed (forget,
// retention) or because they did not open (another KEK, altered bytes).
const (
	UnsealedHeader       = "Warden-Unsealed"
	UnsealErasedHeader   = "Warden-Unseal-Erased"
	UnsealUnopenedHeader = "Warden-Unseal-Unopened"
)

// msgSealingOff answers unseal=1, and a forget, on a server that keeps no
// sealed originals.
const msgSealingOff = "sealed originals are off on this server (trace.seal.enabled is false, trace.raw_input is on, or the trace has no key store): there are no originals to show or erase"

// parseUnseal reads an unseal= parameter: 1 or true, 0 or false; "" (not
// given) is def.
func parseUnseal(v []string, def bool) (bool, error) {
	switch {
	case len(v) == 0:
		return def, nil
	case len(v) > 1:
		return false, &paramError{"unseal", fmt.Sprintf("given %d times, expected once", len(v))}
	}
	switch v[0] {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, &paramError{"unseal", fmt.Sprintf("expected 1 (or true) or 0 (or false), got %q", v[0])}
}

// callerScopes are the scopes r's credential grants; ok false without auth
// (everything is open).
func callerScopes(r *http.Request) (auth.Scope, bool) {
	return auth.ScopesFrom(r.Context())
}

// mayUnseal reports whether r's caller may see sealed originals on the
// runs API: the unseal scope (admin grants it), or no auth. Otherwise it
// returns the 403 message.
func mayUnseal(r *http.Request) (bool, string) {
	s, authed := callerScopes(r)
	if !authed || s.Allows(auth.Unseal) {
		return true, ""
	}
	p := warden.PrincipalFrom(r.Context())
	return false, fmt.Sprintf("forbidden: %s (scopes %s) lacks the unseal scope: unseal=1 shows the sealed originals of redacted values; ask without it for the redacted records", p.Name, s)
}

// mayOpenApprovals reports whether r's caller sees the originals of the
// approvals it reads: one that may decide them (approve), one with the
// unseal scope (admin grants both), or anyone without auth. A read-only
// caller sees them redacted.
func mayOpenApprovals(r *http.Request) bool {
	s, authed := callerScopes(r)
	return !authed || s.Allows(auth.Approve) || s.Allows(auth.Unseal)
}

// viewerOf is who r's caller is, for the unseal records.
func viewerOf(r *http.Request) unseal.Viewer {
	p := warden.PrincipalFrom(r.Context())
	return unseal.Viewer{Name: p.Name, Tenant: p.Tenant, From: r.RemoteAddr, Via: viaAPI}
}

// unsealError answers an error of the unseal Service: 403 for another
// tenant's record (the refusal is recorded), 503 when the unseal could not
// be recorded (nothing is shown unless recorded), 500 otherwise.
func unsealError(w http.ResponseWriter, id string, err error) {
	switch {
	case errors.Is(err, unseal.ErrOtherTenant):
		httpError(w, http.StatusForbidden, fmt.Sprintf("forbidden: record %q belongs to another tenant: its originals are not shown to this token (the attempt is recorded)", id))
	case errors.Is(err, audit.ErrUnavailable):
		httpError(w, http.StatusServiceUnavailable, "the unseal could not be recorded, so no original is shown: "+err.Error())
	default:
		httpError(w, http.StatusInternalServerError, fmt.Sprintf("opening the sealed originals of record %q: %v", id, err))
	}
}

// unsealCount adds up what a response revealed, for its headers.
type unsealCount struct{ values, erased, unopened int }

func (c *unsealCount) add(o redact.Opened) {
	c.values += len(o.Originals)
	c.erased += o.Erased
	c.unopened += o.Failed
}

func (c *unsealCount) setHeaders(h http.Header) {
	h.Set(UnsealedHeader, strconv.Itoa(c.values))
	if c.erased > 0 {
		h.Set(UnsealErasedHeader, strconv.Itoa(c.erased))
	}
	if c.unopened > 0 {
		h.Set(UnsealUnopenedHeader, strconv.Itoa(c.unopened))
	}
}

// revealer shows the records of a runs page revealed for a viewer
// (unseal=1).
type revealer struct {
	svc   *unseal.Service
	v     unseal.Viewer
	count unsealCount
}

// scanPage fills page with the records store's Scan gives for q, as
// store.Scan(ctx, q, page.add) does; with rv, each record revealed for
// rv's viewer.
//
// A revealed record may weigh more than the stored one, and no unseal may
// be recorded for a record the page then leaves out: so the records are
// first gathered as stored (bounded as the page is), then each is revealed
// and added, and its unseal recorded only once the page has taken it. A
// page cut short by the revealed records' bytes ends there (full "bytes",
// not partial); otherwise the scan's own end (full, or *ScanStopped) holds.
func scanPage(ctx context.Context, store audit.Store, q audit.Query, page *recordPage, prefix string, rv *revealer) error {
	if rv == nil {
		err := store.Scan(ctx, q, page.add)
		if err == nil {
			err = page.err
		}
		return err
	}
	gather := newRecordPage(prefix, page.max, page.maxBytes, page.reserve)
	var recs []*audit.Record
	err := store.Scan(ctx, q, func(rec *audit.Record) bool {
		if !gather.add(rec) {
			return false
		}
		recs = append(recs, rec)
		return true
	})
	if err == nil {
		err = gather.err
	}
	var stopped *audit.ScanStopped
	if err != nil && !errors.As(err, &stopped) {
		return err
	}
	for _, rec := range recs {
		cut, rerr := rv.add(ctx, page, rec)
		if rerr != nil {
			return rerr
		}
		if cut {
			return nil
		}
	}
	page.full = gather.full
	return err
}

// add adds rec revealed to page and records the unseal; cut is true when
// the page did not take it (its bytes), and nothing was recorded.
func (rv *revealer) add(ctx context.Context, page *recordPage, rec *audit.Record) (cut bool, err error) {
	if len(rec.Sealed) == 0 {
		return !page.add(rec), page.err
	}
	// What the page would show: opened without recording, to measure.
	o, err := rv.svc.Originals(ctx, rec)
	if err != nil {
		return false, &recordErr{rec.ID, err}
	}
	mark, n, last := page.buf.Len(), page.n, page.lastID
	if !page.add(redact.Reveal(rec, o.Originals)) {
		return true, page.err
	}
	if len(o.Originals) == 0 {
		rv.count.add(o)
		return false, nil
	}
	// Shown: now opened for the viewer, which records the unseal (and
	// refuses another tenant's record, recording that).
	shown, err := rv.svc.Open(ctx, rv.v, rec)
	if err != nil {
		return false, &recordErr{rec.ID, err}
	}
	if len(shown.Originals) != len(o.Originals) { // a key destroyed meanwhile
		page.buf.Truncate(mark)
		page.n, page.lastID, page.full = n, last, ""
		if !page.add(redact.Reveal(rec, shown.Originals)) {
			return true, page.err
		}
	}
	rv.count.add(shown)
	return false, nil
}

// recordErr is an unseal error about one record.
type recordErr struct {
	id  string
	err error
}

func (e *recordErr) Error() string { return e.err.Error() }
func (e *recordErr) Unwrap() error { return e.err }

// scanError answers an error of scanPage that is not the scan's own: an
// unseal's.
func scanError(w http.ResponseWriter, err error) bool {
	var re *recordErr
	if errors.As(err, &re) {
		unsealError(w, re.id, re.err)
		return true
	}
	return false
}
