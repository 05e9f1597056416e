package tracesql

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

func TestWhere(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 1500, time.UTC) // 1.5 µs past the second
	dollar := func(n int) string { return fmt.Sprintf("$%d", n) }
	qmark := func(int) string { return "?" }
	cases := []struct {
		name  string
		q     audit.Query
		param func(int) string
		where string
		args  []any
	}{
		{"nothing", audit.Query{}, dollar, "", nil},
		{"one column", audit.Query{Session: "s1"}, dollar, " WHERE session_id = $1", []any{"s1"}},
		{"columns in order", audit.Query{Tool: "t", Session: "s", Decision: "deny"}, qmark,
			" WHERE session_id = ? AND decision = ? AND tool = ?", []any{"s", "deny", "t"}},
		{"shadow and times", audit.Query{ShadowDisagrees: true, Since: at, Until: at}, dollar,
			" WHERE shadow <> '' AND shadow <> decision AND time >= $1 AND time < $2", []any{at.UnixMicro() + 1, at.UnixMicro() + 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, a := Where(c.q, c.param)
			if w != c.where || !slices.Equal(a, c.args) {
				t.Fatalf("Where = %q %v, want %q %v", w, a, c.where, c.args)
			}
		})
	}
}

func TestCeilMicro(t *testing.T) {
	whole := time.UnixMicro(1_000_000)
	for _, c := range []struct {
		t    time.Time
		want int64
	}{
		{whole, 1_000_000},
		{whole.Add(time.Nanosecond), 1_000_001},
		{whole.Add(999 * time.Nanosecond), 1_000_001},
		{whole.Add(-time.Nanosecond), 1_000_000},
	} {
		if got := CeilMicro(c.t); got != c.want {
			t.Errorf("CeilMicro(%v) = %d, want %d", c.t, got, c.want)
		}
	}
}
