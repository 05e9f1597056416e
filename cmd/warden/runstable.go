package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// runsTable writes records as the table of `warden runs`.
type runsTable struct {
	tw     *tabwriter.Writer
	header bool // the header is still to be written
}

func newRunsTable(w io.Writer) *runsTable {
	return &runsTable{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), header: true}
}

func (t *runsTable) writeHeader() {
	if t.header {
		fmt.Fprintln(t.tw, "TIME\tSURFACE\tDIRECTION\tEVENT\tMETHOD/TOOL\tDECISION\tPOLICY\tREASON\tSESSION\tLATENCY")
		t.header = false
	}
}

func (t *runsTable) row(r *audit.Record) {
	t.writeHeader()
	fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%dµs\n", r.Time.Format("2006-01-02T15:04:05.000Z"),
		dash(r.Surface), dash(r.Direction), r.Event, dash(clip(methodOrTool(r), 32)), decisionCell(r), dash(r.PolicyID),
		dash(clip(r.Reason, 60)), dash(clip(r.SessionID, 36)), r.LatencyUS)
}

// decisionCell is the DECISION column: the decision recorded, and the
// shadow set's when it would have decided otherwise ("deny (shadow:
// allow)").
func decisionCell(r *audit.Record) string {
	if r.ShadowDisagrees() {
		return r.Decision + " (shadow: " + r.ShadowDecision() + ")"
	}
	return r.Decision
}

// flush writes the rows so far (the columns align within one flush).
func (t *runsTable) flush() error {
	t.writeHeader() // no rows: the header alone
	return t.tw.Flush()
}

// methodOrTool is what the step calls: its tool, else the JSON-RPC method
// of an MCP or A2A message (a request; a response has none), else "".
func methodOrTool(r *audit.Record) string {
	if r.Tool != "" {
		return r.Tool
	}
	if r.Surface != warden.SurfaceMCP && r.Surface != warden.SurfaceA2A && !strings.HasPrefix(r.Event, "protocols/") {
		return ""
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(r.Input, &m) != nil {
		return ""
	}
	return m.Method
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes for the table, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
