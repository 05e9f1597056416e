package jsonrpc

import (
	"strings"
	"testing"
)

func TestOverBatch(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want bool
	}{
		{`{"a":1}`, 0, false},
		{`[]`, 0, false},
		{` [ ] `, 1, false},
		{`[1]`, 1, false},
		{`[1,2]`, 1, true},
		{`[1,2]`, 2, false},
		{`[{"a":[1,2,3]},"x,y",{"b":"]"}]`, 3, false},
		{`[{"a":[1,2,3]},"x,y",{"b":"]"}]`, 2, true},
		{`["\",\"",2]`, 2, false},
		{`["\\",2,3]`, 2, true},
		{`[1,2,3,` + strings.Repeat("garbage", 3), 2, true},
	} {
		if got := OverBatch([]byte(tt.in), tt.max); got != tt.want {
			t.Errorf("OverBatch(%s, %d) = %v, want %v", tt.in, tt.max, got, tt.want)
		}
	}
}
