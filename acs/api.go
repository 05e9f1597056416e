package acs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden"
)

// maxAPIEntries bounds one page of GET /api/acs/sessions/{id}.
const maxAPIEntries = 1000

// SessionHandler serves GET /api/acs/sessions/{id}[?after=N&limit=N]: the
// session's handshake state and its ContextEntry chain, oldest first, as
// ACS §8.1 shapes an entry (entry_hash and previous_hash included), so a
// key holder or auditor can recompute every entry_hash and compare the
// head with the chain_hash values the answers published; and the session's
// labels (labels, sorted) from ls (nil: the store keeps none, labels is
// []). A tenant's token sees only its tenant's sessions (scope read,
// checked by the server).
func SessionHandler(st acsstate.Store, ls labels.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		q := r.URL.Query()
		after, limit := int64(0), 100
		for name, vs := range q {
			n, err := strconv.ParseInt(vs[0], 10, 64)
			switch {
			case name != "after" && name != "limit":
				apiError(w, http.StatusBadRequest, name+": unknown parameter (want after, limit)")
				return
			case err != nil || n < 0 || name == "limit" && (n < 1 || n > maxAPIEntries):
				apiError(w, http.StatusBadRequest, fmt.Sprintf("%s: expected an integer (limit 1..%d)", name, maxAPIEntries))
				return
			case name == "after":
				after = n
			default:
				limit = int(n)
			}
		}
		s, err := st.ACSSession(r.Context(), id)
		if tenant := warden.PrincipalFrom(r.Context()).Tenant; err == nil && tenant != "" && s.Tenant != tenant {
			err = acsstate.ErrNoSession // another tenant's session is not there
		}
		if errors.Is(err, acsstate.ErrNoSession) {
			apiError(w, http.StatusNotFound, fmt.Sprintf("no ACS session %q", id))
			return
		}
		if err != nil {
			apiError(w, http.StatusInternalServerError, "reading the session: "+err.Error())
			return
		}
		es, err := st.ACSEntries(r.Context(), id, after, limit)
		if err != nil {
			apiError(w, http.StatusInternalServerError, "reading the chain: "+err.Error())
			return
		}
		entries := make([]any, len(es))
		for i := range es {
			m := EntryObject(&es[i])
			m["record_id"] = es[i].RecordID
			entries[i] = m
		}
		held := []string{} // the session's labels, when the store keeps them
		if ls != nil {
			got, err := ls.SessionLabels(r.Context(), s.Tenant, id)
			if err != nil {
				apiError(w, http.StatusInternalServerError, "reading the session's labels: "+err.Error())
				return
			}
			held = append(held, got...)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"session": s, "labels": held, "entries": entries, "after": after})
	})
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
