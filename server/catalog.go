package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/wardenhq/warden/catalog"
)

// eventsHandler serves GET /api/hooks/events?family=&sync_only=true: the hook
// catalog (docs/hooks.md) as a JSON array of events with the keys name, family,
// source, sync ("yes" or "async only"), direction, payload, patch,
// payload_fields, patch_fields and fires, in catalog order. family keeps one
// family (an unknown family gives an empty array); sync_only (a boolean:
// true, false, 1, 0, ...) keeps the sync-eligible events; any other sync_only
// value is a 400 with a JSON error.
func eventsHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	syncOnly := false
	if s := q.Get("sync_only"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			httpError(w, http.StatusBadRequest, "sync_only: expected true or false, got "+strconv.Quote(s))
			return
		}
		syncOnly = b
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(catalog.Select(q.Get("family"), syncOnly))
}
