package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/unseal"
)

// The decisions API of the console (docs/console.md):
//
//	GET /api/runs?cursor=&limit=&surface=&event=&decision=&policy=&tool=&session=&agent=&since=&until=&q=&disagree=&unseal=
//	GET /api/runs/{id}?unseal=
//	GET /api/runs/stream?surface=&event=&decision=&policy=&tool=&session=&agent=&since=&until=&q=&disagree=
//
// A caller whose token has a tenant reads its tenant's records only: its
// tenant is a filter of every read, the stream included, and another
// tenant's record is 404 (with unseal=1, 403, and the attempt recorded).
// unseal=1 shows the records with their sealed originals revealed, to a
// caller with the unseal scope (unseal.go).
const (
	// DefaultRunsLimit is /api/runs's page without ?limit=; MaxRunsLimit
	// caps ?limit=.
	DefaultRunsLimit = 50
	MaxRunsLimit     = 500
	// RunsBudget bounds the time /api/runs spends scanning for one page
	// (audit.Query.Budget): a scan that has not filled its page by then —
	// a q= search through many records, a rare filter under load — answers
	// with what it found, "partial": true, "scanned" and the next_cursor
	// to continue from.
	RunsBudget = 200 * time.Millisecond
	// maxParamBytes bounds one filter's value.
	maxParamBytes = 1024
)

// runsFilterParams are the filters of /api/runs and /api/runs/stream.
var runsFilterParams = []string{"surface", "event", "decision", "policy", "tool", "session", "agent", "since", "until", "q", "disagree"}

// paramError is a 400 naming the parameter at fault.
type paramError struct{ param, msg string }

func (e *paramError) Error() string { return e.param + ": " + e.msg }

// parseRunsQuery reads the filters of a runs request into a Query, and
// with paging (/api/runs) its cursor and limit. Every parameter is
// checked: an unknown or repeated one, a malformed value, is a 400 that
// names it. since and until take an RFC 3339 time or a duration, meaning
// that long before now.
func parseRunsQuery(v url.Values, paging bool, now time.Time) (q audit.Query, limit int, err error) {
	allowed := runsFilterParams
	if paging {
		// unseal is read by the handler (parseUnseal).
		allowed = append([]string{"cursor", "limit"}, append(allowed, "unseal")...)
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	slices.Sort(names) // one error, the same each time
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return q, 0, &paramError{name, "unknown parameter (expected " + strings.Join(allowed, ", ") + ")"}
		}
		if n := len(v[name]); n > 1 {
			return q, 0, &paramError{name, fmt.Sprintf("given %d times, expected once", n)}
		}
		if len(v.Get(name)) > maxParamBytes {
			return q, 0, &paramError{name, fmt.Sprintf("longer than %d bytes", maxParamBytes)}
		}
	}
	q = audit.Query{
		Event: v.Get("event"), Decision: v.Get("decision"), Policy: v.Get("policy"), Tool: v.Get("tool"),
		Session: v.Get("session"), Agent: v.Get("agent"), Surface: v.Get("surface"), Text: v.Get("q"),
		After: v.Get("cursor"),
	}
	// unseal: the records of unseals and erasures (package unseal).
	if q.Surface != "" && !slices.Contains(audit.Surfaces, q.Surface) && q.Surface != unseal.Surface {
		return q, 0, &paramError{"surface", fmt.Sprintf("expected one of %s, %s, got %q", strings.Join(audit.Surfaces, ", "), unseal.Surface, q.Surface)}
	}
	if q.Decision != "" {
		if _, err := warden.ParseRecorded(q.Decision); err != nil {
			return q, 0, &paramError{"decision", fmt.Sprintf("expected allow, deny, modify, ask or defer, got %q", q.Decision)}
		}
	}
	switch d := v.Get("disagree"); d {
	case "":
	case "shadow": // the records whose shadow set would have decided otherwise
		q.ShadowDisagrees = true
	default:
		return q, 0, &paramError{"disagree", fmt.Sprintf("expected shadow, got %q", d)}
	}
	if strings.IndexByte(q.Text, 0) >= 0 {
		return q, 0, &paramError{"q", "must not hold a NUL byte"}
	}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		s := v.Get(t.name)
		if s == "" {
			continue
		}
		at, err := ParseWhen(s, now)
		if err != nil {
			return q, 0, &paramError{t.name, err.Error()}
		}
		*t.to = at
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return q, 0, &paramError{"since", fmt.Sprintf("%s is not before until (%s)",
			q.Since.Format(time.RFC3339Nano), q.Until.Format(time.RFC3339Nano))}
	}
	limit = DefaultRunsLimit
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxRunsLimit {
			return q, 0, &paramError{"limit", fmt.Sprintf("expected an integer in 1..%d, got %q", MaxRunsLimit, s)}
		}
		limit = n
	}
	return q, limit, nil
}

// ParseWhen reads an RFC 3339 time, or a duration (Go syntax: 90s, 15m,
// 24h) meaning that long before now: the since= and until= of /api/runs
// and `warden runs --since`.
func ParseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("expected an RFC 3339 time (2026-11-21T10:00:00Z) or a duration before now (90s, 15m, 24h), got %q", s)
	}
	return now.Add(-d), nil
}

// runsPage is the answer of /api/runs, but for the records, which are
// written as the store streams them (recordPage).
type runsPage struct {
	// NextCursor is the cursor of the next page (?cursor=), "" when no
	// record after this page matches.
	NextCursor string `json:"next_cursor"`
	// Partial is true when the scan stopped at RunsBudget before filling
	// the page: more records may match after NextCursor (which is where
	// the scan stopped, not the last record given). Scanned is how many
	// records it examined.
	Partial bool `json:"partial,omitempty"`
	Scanned int  `json:"scanned,omitempty"`
}

// runsPageReserve is kept free in a page for what follows the records (a
// runsPage with a cursor of up to ~150 bytes).
const runsPageReserve = 256

// apiRunsHandler serves GET /api/runs: one page of records, newest first;
// with unseal=1 (and svc), revealed for the caller.
func apiRunsHandler(store audit.Store, svc *unseal.Service, maxBytes int64) http.HandlerFunc {
	if maxBytes <= 0 {
		maxBytes = DefaultRunsBytes
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q, limit, err := parseRunsQuery(r.URL.Query(), true, time.Now())
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		rv, ok := unsealRequest(w, r, svc)
		if !ok {
			return
		}
		q.Tenant = warden.PrincipalFrom(r.Context()).Tenant
		q.Budget = RunsBudget
		if store == nil {
			httpError(w, http.StatusServiceUnavailable, "no trace store")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		const prefix = `{"runs":[`
		page := newRecordPage(prefix, limit, maxBytes, runsPageReserve)
		err = scanPage(ctx, store, q, page, prefix, rv)
		if scanError(w, err) {
			return
		}
		var tail runsPage
		var stopped *audit.ScanStopped
		switch {
		case errors.As(err, &stopped):
			tail = runsPage{NextCursor: stopped.After, Partial: true, Scanned: stopped.Scanned}
		case errors.Is(err, audit.ErrUnknownCursor):
			httpError(w, http.StatusBadRequest, fmt.Sprintf("cursor: no record with id %q (pruned since, or from another trace)", q.After))
			return
		case err != nil:
			httpError(w, http.StatusInternalServerError, "reading the trace: "+err.Error())
			return
		case page.full != "":
			tail.NextCursor = page.lastID
		}
		b, _ := json.Marshal(tail) // {"next_cursor":...}
		page.buf.WriteString("],")
		page.buf.Write(b[1:])
		page.buf.WriteByte('\n')
		if rv != nil {
			rv.count.setHeaders(w.Header())
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page.buf.Bytes())
	}
}

// unsealRequest reads r's unseal= parameter: a revealer for unseal=1 (nil
// without), or false when it answered r: 400 for a bad value, 403 for a
// caller without the unseal scope, 409 when svc is nil (sealing off).
func unsealRequest(w http.ResponseWriter, r *http.Request, svc *unseal.Service) (*revealer, bool) {
	on, err := parseUnseal(r.URL.Query()["unseal"], false)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	if !on {
		return nil, true
	}
	if ok, msg := mayUnseal(r); !ok {
		httpError(w, http.StatusForbidden, msg)
		return nil, false
	}
	if svc == nil {
		httpError(w, http.StatusConflict, msgSealingOff)
		return nil, false
	}
	return &revealer{svc: svc, v: viewerOf(r)}, true
}

// apiRunHandler serves GET /api/runs/{id}: one record, 404 when the store
// holds none with that id for the caller's tenant. With unseal=1 the
// record is revealed for the caller (headers UnsealedHeader...); it is
// then looked up in every tenant, so that a tenant's caller asking for
// another tenant's record is refused (403) and, when the record has
// sealed originals, the attempt recorded.
func apiRunHandler(store audit.Store, svc *unseal.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		for name := range r.URL.Query() {
			if name != "unseal" {
				httpError(w, http.StatusBadRequest, name+": unknown parameter (/api/runs/{id} takes unseal= only)")
				return
			}
		}
		rv, ok := unsealRequest(w, r, svc)
		if !ok {
			return
		}
		if store == nil {
			httpError(w, http.StatusServiceUnavailable, "no trace store")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		tenant := warden.PrincipalFrom(r.Context()).Tenant
		q := audit.Query{ID: id, Tenant: tenant}
		if rv != nil {
			q.Tenant = "" // another tenant's record is refused, and recorded
		}
		recs, err := audit.Collect(ctx, store, q, 1)
		if err != nil {
			httpError(w, http.StatusInternalServerError, "reading the trace: "+err.Error())
			return
		}
		if len(recs) == 0 {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no record with id %q", id))
			return
		}
		rec := &recs[0]
		if rv != nil {
			shown, opened, err := rv.svc.Reveal(ctx, rv.v, rec)
			if err == nil && tenant != "" && rec.Tenant != tenant {
				// A record without sealed values: nothing was opened,
				// but it is another tenant's all the same.
				err = unseal.ErrOtherTenant
			}
			if err != nil {
				unsealError(w, id, err)
				return
			}
			rec = shown
			rv.count.add(opened)
			rv.count.setHeaders(w.Header())
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec)
	}
}
