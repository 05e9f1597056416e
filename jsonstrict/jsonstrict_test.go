package jsonstrict

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/jsontest"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name, in, want string // want: "" ok, "syntax", or the error text
	}{
		{"plain", `{"a":1,"b":[{"c":"d"}]}`, ""},
		{"same key in sibling objects", `[{"k":1},{"k":2}]`, ""},
		{"same key at two depths", `{"k":{"k":1}}`, ""},
		{"pair escape", `{"s":"\ud83d\ude00"}`, ""},
		{"escaped backslash then u", `{"s":"\\ud800"}`, ""},
		{"duplicate at top", `{"k":1,"k":2}`, `duplicate key "k" at the top level`},
		{"duplicate deep (the AWS-key bypass)", `{"params":{"arguments":{"k":"AKIAIOSFODNN7EXAMPLE","k":"x"}}}`, `duplicate key "k" in params.arguments`},
		{"duplicate in an array member", `{"items":[{},{"a":1,"a":1}]}`, `duplicate key "a" in items[1]`},
		{"case fold", `{"params":{"name":"safe","Name":"send_email"}}`, `keys "name" and "Name" differ only in case in params`},
		{"invalid utf-8", "{\"s\":\"a\xffb\"}", "invalid UTF-8 at the top level"},
		{"lone high surrogate", `{"s":"\ud800x"}`, `a lone surrogate escape \ud800 at offset 6 at the top level`},
		{"lone low surrogate", `{"s":"\udc00"}`, `a lone surrogate escape \udc00 at offset 6 at the top level`},
		{"not json", `{"a":`, "syntax"},
		{"two values", `{} {}`, "syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.in))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tt.want == "syntax" && !errors.Is(err, ErrSyntax):
				t.Fatalf("Check = %v, want a syntax error", err)
			case tt.want != "" && tt.want != "syntax" && (err == nil || err.Error() != tt.want):
				t.Fatalf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzCheck: whatever Check accepts, a first-wins reader, encoding/json
// (last wins) and a case-insensitive reader read alike — the bytes warden
// forwards mean what its policies saw.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"B":1,"b":2}}`, `[{"x":"\ud800"}]`, `{"k":"v"}`, `{"A":[1,{"a":"é"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data) != nil {
			return
		}
		var last any
		if err := json.Unmarshal(data, &last); err != nil {
			return // e.g. 1e700: every surface decodes next and refuses it then
		}
		if first := jsontest.FirstWins(data); !reflect.DeepEqual(first, last) {
			t.Fatalf("first-wins %v != last-wins %v", first, last)
		}
		lower := strings.ToLower(string(data))
		if Check([]byte(lower)) != nil && json.Valid([]byte(lower)) && utf8Lower(lower) {
			// Lower-casing every key of accepted input must not create
			// duplicates: keys differing only in case were refused.
			var e *Error
			if errors.As(Check([]byte(lower)), &e) && strings.Contains(e.Msg, "duplicate key") {
				t.Fatalf("keys equal under case folding were accepted: %s", data)
			}
		}
	})
}

// utf8Lower: lower-casing kept the text comparable (ASCII case folding only
// for this check).
func utf8Lower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestClash: keys met one at a time clash with the one earlier key they
// equal ignoring case, in short lists (pairwise) and long ones (folded).
func TestClash(t *testing.T) {
	long := make([]string, smallObject+4)
	for i := range long {
		long[i] = "k" + strings.Repeat("x", i)
	}
	tests := []struct {
		name string
		keys []string
		k    string
		want int
	}{
		{"none yet", nil, "a", -1},
		{"distinct", []string{"a", "b"}, "c", -1},
		{"duplicate", []string{"a", "b"}, "b", 1},
		{"case", []string{"To", "cc"}, "to", 0},
		{"Kelvin sign", []string{"k"}, "\u212a", 0},
		{"long, distinct", long, "y", -1},
		{"long, duplicate", long, long[smallObject+2], smallObject + 2},
		{"long, case", long, "KXX", 2},
		{"long, Kelvin sign", long, "\u212ax", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var folded map[string]int
			var keys []string
			for _, k := range tt.keys { // met one at a time, as a parser meets them
				if j := Clash(keys, &folded, k); j >= 0 {
					t.Fatalf("setup: %q clashes with %q", k, keys[j])
				}
				keys = append(keys, k)
			}
			if got := Clash(keys, &folded, tt.k); got != tt.want {
				t.Fatalf("Clash(%q) = %d, want %d", tt.k, got, tt.want)
			}
		})
	}
}
