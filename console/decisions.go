package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/unseal"

	"github.com/wardenhq/warden"
)

// Surfaces and decisions the filters offer.
var (
	surfaceNames  = []string{warden.SurfaceAOS, warden.SurfaceMCP, warden.SurfaceA2A, warden.SurfaceHooks, warden.SurfaceSDK, warden.SurfaceApproval, unseal.Surface}
	decisionNames = []string{"allow", "deny", "modify", "ask", "defer"}
)

// filters are the decisions page's query parameters, as the form shows
// them.
type filters struct {
	Surface, Event, Decision, Policy, Tool, Session, Agent, Since, Until, Q string
	// Disagree is "shadow": the records whose shadow set would have
	// decided otherwise (audit.Query.ShadowDisagrees).
	Disagree string
}

// filterKeys are the query parameters of filters, in form order.
var filterKeys = []string{"surface", "event", "decision", "policy", "tool", "session", "agent", "since", "until", "q", "disagree"}

func (f *filters) ptrs() []*string {
	return []*string{&f.Surface, &f.Event, &f.Decision, &f.Policy, &f.Tool, &f.Session, &f.Agent, &f.Since, &f.Until, &f.Q, &f.Disagree}
}

// Encode is the filters as a query string (empty ones left out).
func (f filters) Encode() string {
	v := url.Values{}
	for i, p := range f.ptrs() {
		if *p != "" {
			v.Set(filterKeys[i], *p)
		}
	}
	return v.Encode()
}

// Any reports whether a filter is set.
func (f filters) Any() bool { return f.Encode() != "" }

// parseFilters reads the filters of q into a store query. since and until
// take RFC 3339, a date-time as a browser's datetime-local input sends it
// (UTC), a date, or a duration back from now ("15m", "2h", "7d").
func parseFilters(q url.Values, now time.Time) (audit.Query, filters, error) {
	var f filters
	for i, p := range f.ptrs() {
		*p = strings.TrimSpace(q.Get(filterKeys[i]))
	}
	wq := audit.Query{Surface: f.Surface, Event: f.Event, Decision: f.Decision, Policy: f.Policy,
		Session: f.Session, Agent: f.Agent, Tool: f.Tool, Text: f.Q, ShadowDisagrees: f.Disagree == "shadow"}
	if f.Disagree != "" && f.Disagree != "shadow" {
		return wq, f, fmt.Errorf("disagree: expected shadow, got %q", f.Disagree)
	}
	if f.Decision != "" {
		if _, err := warden.ParseRecorded(f.Decision); err != nil {
			return wq, f, fmt.Errorf("decision: expected one of %s", strings.Join(decisionNames, ", "))
		}
	}
	var err error
	if wq.Since, err = parseTime(f.Since, now); err != nil {
		return wq, f, fmt.Errorf("since: %v", err)
	}
	if wq.Until, err = parseTime(f.Until, now); err != nil {
		return wq, f, fmt.Errorf("until: %v", err)
	}
	return wq, f, nil
}

// parseTime reads a time filter ("" is the zero time).
func parseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("expected a time (2026-11-21T10:00, RFC 3339) or a duration back from now (15m, 2h, 7d), got %q", s)
}

// decisionsData is the decisions page.
type decisionsData struct {
	F                   filters
	Surfaces, Decisions []string
	Rows                []row
	Err                 string
	// Older and Newer are the cursors of the pages around this one ("":
	// none); First is whether this is the newest page (followed live).
	Older, Newer string
	First        bool
	Elapsed      time.Duration
	stream       string
	// Stopped is set when the search spent its time budget before it had
	// a page: the rows found so far are shown, and Older or Newer continues
	// the search from where it stopped.
	Stopped *audit.ScanStopped
	// Backward is whether the page was asked newer than a cursor (before=).
	Backward bool
	// UnsealView is the list of unseals and erasures (surface=unseal):
	// Unseals are its rows, shown instead of Rows.
	UnsealView bool
	Unseals    []unsealRow
}

// Link returns the page's link with the filters and a cursor.
func (d decisionsData) Link(key, cursor string) string {
	v, _ := url.ParseQuery(d.F.Encode())
	if cursor != "" {
		v.Set(key, cursor)
	}
	if len(v) == 0 {
		return "/decisions"
	}
	return "/decisions?" + v.Encode()
}

// StreamURL is the live stream with the page's filters ("": not live).
func (d decisionsData) StreamURL() string {
	if d.stream == "" {
		return ""
	}
	if q := d.F.Encode(); q != "" {
		return d.stream + "?" + q
	}
	return d.stream
}

// scanBudget bounds the time a decisions page searches the trace: a filter
// that matches few records answers with what it found so far and a link to
// search on, as /api/runs does.
var scanBudget = 250 * time.Millisecond

// collectPage returns the first n records Scan visits for q, and the
// *audit.ScanStopped when q's budget ran out first.
func collectPage(ctx context.Context, st audit.Store, q audit.Query, n int) ([]audit.Record, *audit.ScanStopped, error) {
	out := make([]audit.Record, 0, n)
	err := st.Scan(ctx, q, func(r *audit.Record) bool {
		out = append(out, *r)
		return len(out) < n
	})
	var stopped *audit.ScanStopped
	if errors.As(err, &stopped) {
		return out, stopped, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return out, nil, nil
}

// decisions serves the decisions page: a page of PageSize records,
// newest first, matching the filters; ?after=ID continues with older
// records, ?before=ID with newer ones. The first page is followed live by
// the script.
func (c *Console) decisions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := r.URL.Query()
	wq, f, err := parseFilters(q, c.o.Now())
	d := decisionsData{F: f, Surfaces: surfaceNames, Decisions: decisionNames, stream: c.o.RunsStream}
	p := page{Title: "Decisions", Nav: "decisions", Data: &d}
	if f.Surface == unseal.Surface {
		// Who saw originals and who erased them: a table of its own, not
		// followed live (the script draws decisions' rows).
		d.UnsealView, d.stream = true, ""
		p.Title, p.Nav = "Unseals", "unseals"
	}
	if err != nil {
		d.Err = err.Error()
		c.render(w, r, http.StatusBadRequest, "decisions", p)
		return
	}
	if c.o.Store == nil {
		d.Err = "no trace: warden runs without a store"
		c.render(w, r, http.StatusServiceUnavailable, "decisions", p)
		return
	}
	wq.Tenant = warden.PrincipalFrom(r.Context()).Tenant
	after, before := q.Get("after"), q.Get("before")
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	wq.Budget = scanBudget
	var recs []audit.Record
	switch {
	case before != "":
		// Newer records: oldest first from the cursor, then turned around.
		d.Backward = true
		wq.After, wq.Oldest = before, true
		recs, d.Stopped, err = collectPage(ctx, c.o.Store, wq, PageSize+1)
		slices.Reverse(recs)
		if err == nil {
			if len(recs) > PageSize {
				recs = recs[1:]
				d.Newer = recs[0].ID
			} else if d.Stopped != nil {
				d.Newer = d.Stopped.After
			}
			if len(recs) > 0 {
				d.Older = recs[len(recs)-1].ID
			} else {
				d.Older = before
			}
		}
	default:
		wq.After = after
		recs, d.Stopped, err = collectPage(ctx, c.o.Store, wq, PageSize+1)
		if err == nil {
			if len(recs) > PageSize {
				recs = recs[:PageSize]
				d.Older = recs[PageSize-1].ID
			} else if d.Stopped != nil {
				d.Older = d.Stopped.After
			}
			if after != "" {
				d.Newer = after
				if len(recs) > 0 {
					d.Newer = recs[0].ID
				}
			}
		}
	}
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, audit.ErrUnknownCursor) {
			code, err = http.StatusBadRequest, errors.New("the page's cursor is not a record of the trace")
		}
		d.Err = "reading the trace: " + err.Error()
		c.render(w, r, code, "decisions", p)
		return
	}
	d.First = d.Newer == "" && after == "" && before == ""
	if d.First && d.stream != "" {
		p.Live = "decisions"
	}
	if d.UnsealView {
		d.Unseals = make([]unsealRow, 0, len(recs))
		for i := range recs {
			d.Unseals = append(d.Unseals, unsealRowOf(&recs[i]))
		}
	} else {
		d.Rows = make([]row, len(recs))
		for i := range recs {
			d.Rows[i] = rowOf(&recs[i])
		}
	}
	d.Elapsed = time.Since(start)
	c.render(w, r, http.StatusOK, "decisions", p)
}
