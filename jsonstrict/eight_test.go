package jsonstrict

import (
	"strings"
	"testing"
)

// TestParseEightAtATime runs the differential check (parse_test.go) where
// the parser skips eight bytes at a time: every indentation from 0 to 20
// spaces (and tabs and newlines mixed in), and strings with each kind of
// byte that ends a plain run ('"', '\\', a control character, non-ASCII,
// invalid UTF-8) at every offset from 0 to 20, so each falls before, on
// and after the eight-byte boundaries.
func TestParseEightAtATime(t *testing.T) {
	var bodies []string
	for n := range 21 {
		ind := strings.Repeat(" ", n)
		bodies = append(bodies,
			"{\n"+ind+`"a":`+ind+"[\n"+ind+"1,"+ind+`"x"`+ind+"],"+ind+`"b"`+ind+":"+ind+"{}"+ind+"\n}",
			ind+"\t"+ind+"\r\n"+ind+`"s"`+ind,
			"["+ind+"]",
		)
	}
	for _, end := range []string{`\"`, `\\`, `\n`, `\u00e9`, "\x01", "\t", "é", "\xff", "\U0001F600", `"`} {
		for off := range 21 {
			for _, tail := range []int{0, 1, 7, 8, 9, 17} {
				s := `"` + strings.Repeat("a", off) + end + strings.Repeat("b", tail) + `"`
				bodies = append(bodies, s, `{"k`+strings.Repeat("k", off)+`":`+s+`}`, s[:len(s)-1]) // and unterminated
			}
		}
	}
	for _, b := range bodies {
		if msg := differential([]byte(b)); msg != "" {
			t.Error(msg)
		}
	}
}
