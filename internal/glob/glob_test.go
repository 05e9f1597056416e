package glob

import "testing"

func TestGlob(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"steps/*", "steps/toolCallRequest", true},
		{"steps/*", "protocols/MCP", false},
		{"*", "anything/at/all", true},
		{"tool.*_call", "tool.pre_call", true},
		{"tool.?re_call", "tool.pre_call", true},
		{"tool.?re_call", "tool.pre_call2", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"?", "é", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"**", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.pat+"~"+tc.s, func(t *testing.T) {
			if got := Match(tc.pat, tc.s); got != tc.want {
				t.Errorf("Match(%q, %q) = %v", tc.pat, tc.s, got)
			}
		})
	}
}
