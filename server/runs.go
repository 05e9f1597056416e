package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/unseal"
)

// DefaultRunsBytes bounds one /api/hooks/runs response unless
// Options.RunsBytes says otherwise: 8 MiB.
const DefaultRunsBytes int64 = 8 << 20

// Headers of a /api/hooks/runs response that holds fewer records than asked
// for while more match: RunsTruncated says why ("bytes": the response
// reached limits.runs_bytes; "last": ?last records were given), RunsNext is
// the cursor to pass as ?after= for the next page.
const (
	RunsTruncated = "Warden-Runs-Truncated"
	RunsNext      = "Warden-Runs-Next"
)

// runsHandler serves GET /api/hooks/runs: the newest ?last= records
// matching ?session=, ?event=, ?decision=, after the cursor ?after= (a
// record id), as a JSON array. Records are encoded as the store streams
// them and the response stops before it would exceed maxBytes (a record
// larger than maxBytes on its own is sent alone), so memory holds at most
// one page of maxBytes, whatever the records weigh.
//
// With unseal=1 the records are revealed for the caller, as on /api/runs
// (unsealRequest).
func runsHandler(store audit.Store, svc *unseal.Service, maxBytes int64) http.HandlerFunc {
	if maxBytes <= 0 {
		maxBytes = DefaultRunsBytes
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := audit.Query{Session: q.Get("session"), Event: q.Get("event"), Decision: q.Get("decision"), After: q.Get("after")}
		// A caller with a tenant reads its tenant's records only, whatever
		// it asks for (tenants).
		f.Tenant = warden.PrincipalFrom(r.Context()).Tenant
		last := audit.DefaultLast
		if s := q.Get("last"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > audit.MaxLast {
				httpError(w, http.StatusBadRequest, fmt.Sprintf("last: expected an integer in 1..%d, got %q", audit.MaxLast, s))
				return
			}
			last = n
		}
		if f.Decision != "" {
			if _, err := warden.ParseRecorded(f.Decision); err != nil {
				httpError(w, http.StatusBadRequest, "decision: expected allow, deny, modify, ask or defer")
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
		page := newRecordPage("[", last, maxBytes, 1)
		err := scanPage(ctx, store, f, page, "[", rv)
		if scanError(w, err) {
			return
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, "reading the trace: "+err.Error())
			return
		}
		page.buf.WriteString("]\n")
		if rv != nil {
			rv.count.setHeaders(w.Header())
		}
		w.Header().Set("Content-Type", "application/json")
		if page.full != "" {
			w.Header().Set(RunsTruncated, page.full)
			w.Header().Set(RunsNext, page.lastID)
		}
		_, _ = w.Write(page.buf.Bytes())
	}
}
