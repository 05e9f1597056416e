package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Bounds of what one decision's page shows.
const (
	// maxShownJSON bounds the input and output shown, in bytes.
	maxShownJSON = 256 << 10
	// maxDiffLines bounds the lines a diff compares (each side).
	maxDiffLines = 3000
)

// errNoRecord: the trace holds no record with that id (for this viewer).
var errNoRecord = errors.New("no record with that id")

// findRecord returns the record id from the store; a tenant's viewer
// finds its tenant's records only.
func findRecord(ctx context.Context, st audit.Store, id, tenant string) (*audit.Record, error) {
	var found *audit.Record
	err := st.Scan(ctx, audit.Query{ID: id, Tenant: tenant}, func(r *audit.Record) bool {
		found = r
		return false
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, errNoRecord
	}
	return found, nil
}

// decisionData is one decision's page.
type decisionData struct {
	R      *audit.Record
	Row    row
	Input  string
	Output string
	// Diff is the change a modify made, line by line (nil: none, or too
	// large to compare: DiffNote says).
	Diff     []diffLine
	DiffNote string
	Views    string
	// Shown says what the page shows of the record's originals; Unseal is
	// the record as an unseal or erasure (nil for a decision).
	Shown  shown
	Unseal *unsealRow
}

// decision serves one decision: everything the record holds.
func (c *Console) decision(w http.ResponseWriter, r *http.Request) {
	if c.o.Store == nil {
		c.fail(w, r, http.StatusServiceUnavailable, "no trace: warden runs without a store")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	id := r.PathValue("id")
	rec, err := findRecord(ctx, c.o.Store, id, warden.PrincipalFrom(r.Context()).Tenant)
	if errors.Is(err, errNoRecord) {
		c.fail(w, r, http.StatusNotFound, "The trace holds no decision "+id+".")
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "reading the trace: "+err.Error())
		return
	}
	var sh shown
	if len(rec.Sealed) > 0 && c.o.Unseal != nil && c.mayRevealRecord(ctx, c.viewer(r), rec) {
		rec, sh = c.revealRecord(ctx, r, rec)
	}
	d := decisionData{R: rec, Row: rowOf(rec), Input: pretty(rec.Input), Output: pretty(rec.Output), Views: pretty(rec.Views), Shown: sh}
	if isUnseal(rec) {
		u := unsealRowOf(rec)
		d.Unseal = &u
	}
	if len(rec.Output) > 0 {
		d.Diff, d.DiffNote = jsonDiff(rec.Input, rec.Output)
	}
	c.render(w, r, http.StatusOK, "decision", page{Title: "Decision " + cut(id, 13), Nav: "decisions", Data: &d})
}

// pretty indents JSON as stored (key order kept), cut to maxShownJSON.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > maxShownJSON {
		return strings.ToValidUTF8(b.String()[:maxShownJSON], "") + "\n… (cut: the record is larger; `warden runs -o json` gives all of it)"
	}
	return b.String()
}
