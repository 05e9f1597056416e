// Package tracesql holds the SQL both trace stores (sqlite, postgres) build
// alike: the WHERE clause of a trace scan for a audit.Query, and how a time
// bound compares with a stored time. The stores differ only in how a query
// parameter is written (? or $n).
package tracesql

import (
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
)

// Where returns q's WHERE clause (empty, or starting with " WHERE ") over
// the runs table's columns and its arguments; param(n) writes the n-th
// parameter (1-based) as the store's driver wants it.
func Where(q audit.Query, param func(n int) string) (string, []any) {
	var w strings.Builder
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		w.WriteString(And(w.String()))
		w.WriteString(cond + " " + param(len(args)))
	}
	for _, f := range []struct{ col, v string }{
		{"session_id", q.Session}, {"event", q.Event}, {"decision", q.Decision},
		{"surface", q.Surface}, {"policy_id", q.Policy}, {"agent_id", q.Agent},
		{"tenant", q.Tenant}, {"tool", q.Tool}, {"id", q.ID},
	} {
		if f.v != "" {
			add(f.col+" =", f.v)
		}
	}
	if q.ShadowDisagrees {
		w.WriteString(And(w.String()))
		w.WriteString("shadow <> '' AND shadow <> decision")
	}
	if !q.Since.IsZero() {
		add("time >=", CeilMicro(q.Since))
	}
	if !q.Until.IsZero() {
		add("time <", CeilMicro(q.Until))
	}
	return w.String(), args
}

// And is what joins one more condition to the WHERE clause where.
func And(where string) string {
	if where == "" {
		return " WHERE "
	}
	return " AND "
}

// CeilMicro is t in unix microseconds, rounded up: a stored time (whole
// microseconds) is >= t, or < t, exactly when it is >= or < CeilMicro(t).
func CeilMicro(t time.Time) int64 {
	us := t.UnixMicro()
	if t.After(time.UnixMicro(us)) {
		us++
	}
	return us
}
