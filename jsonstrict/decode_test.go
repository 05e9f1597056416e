package jsonstrict

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	type body struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
		Skip     string `json:"-"`
		Plain    int
	}
	tests := []struct {
		name, in string
		want     string // "" ok, "syntax", or the error text
		decision string
	}{
		{"exact keys", `{"decision":"deny","reason":"no"}`, "", "deny"},
		{"untagged field by its Go name", `{"decision":"deny","Plain":1}`, "", "deny"},
		{"case-variant duplicate (the approvals bypass)", `{"decision":"deny","Decision":"approve"}`,
			`keys "decision" and "Decision" differ only in case at the top level`, ""},
		{"duplicate", `{"decision":"deny","decision":"approve"}`, `duplicate key "decision" at the top level`, ""},
		{"a key only in another case", `{"Decision":"approve"}`,
			`unknown key "Decision" (the keys are "Plain", "decision", "reason", spelled exactly) at the top level`, ""},
		{"an unknown key", `{"decision":"deny","force":true}`,
			`unknown key "force" (the keys are "Plain", "decision", "reason", spelled exactly) at the top level`, ""},
		{"the empty key", `{"":1}`, `unknown key "" (the keys are "Plain", "decision", "reason", spelled exactly) at the top level`, ""},
		{"a field tagged -", `{"Skip":"x"}`, `unknown key "Skip" (the keys are "Plain", "decision", "reason", spelled exactly) at the top level`, ""},
		{"invalid UTF-8", "{\"decision\":\"de\xffny\"}", "invalid UTF-8 at the top level", ""},
		{"lone surrogate", `{"decision":"\ud800"}`, `a lone surrogate escape \ud800 at offset 13 at the top level`, ""},
		{"two values", `{} {}`, "syntax", ""},
		{"not JSON", `{"decision":`, "syntax", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b body
			err := Decode([]byte(tt.in), &b)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Decode = %v, want nil", err)
			case tt.want == "syntax" && !errors.Is(err, ErrSyntax):
				t.Fatalf("Decode = %v, want a syntax error", err)
			case tt.want != "" && tt.want != "syntax" && (err == nil || err.Error() != tt.want):
				t.Fatalf("Decode = %v, want %q", err, tt.want)
			}
			if err == nil && b.Decision != tt.decision {
				t.Fatalf("decision %q, want %q", b.Decision, tt.decision)
			}
		})
	}
	// Not a struct: the key rules of Check only.
	var m map[string]any
	if err := Decode([]byte(`{"a":1,"A":2}`), &m); err == nil {
		t.Fatal("a map took case-variant keys")
	}
	if err := Decode([]byte(`{"a":1,"B":2}`), &m); err != nil || len(m) != 2 {
		t.Fatalf("map: %v %v", m, err)
	}
	// DecodeOpen: other keys are ignored; one that names a field in
	// another case is not.
	var open struct {
		Event string `json:"event"`
	}
	if err := DecodeOpen([]byte(`{"event":"a","extra":1}`), &open); err != nil || open.Event != "a" {
		t.Fatalf("DecodeOpen with another key: %v %q", err, open.Event)
	}
	if err := DecodeOpen([]byte(`{"EVENT":"a"}`), &open); err == nil || err.Error() != `unknown key "EVENT" (the keys are "event", spelled exactly) at the top level` {
		t.Fatalf("DecodeOpen with a key in another case: %v", err)
	}
	if err := DecodeOpen([]byte(`{"event":"a","Event":"b"}`), &open); err == nil {
		t.Fatal("DecodeOpen took case-variant keys")
	}
	// A value of the wrong type is encoding/json's error.
	if err := Decode([]byte(`{"decision":1}`), &body{}); err == nil {
		t.Fatal("a number decoded into a string")
	}
}
