package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTextMatcher(t *testing.T) {
	r := &Record{
		Reason: "External e-mail needs APPROVAL", Event: "steps/toolCallRequest", Tool: "Send_Email",
		SessionID: "sess-42", AgentID: "agent-Ω", PolicyID: "no-external-email",
		Input:     json.RawMessage(`{"to":"Bob@Evil.example","note":"caf\u00e9 Straße","key":"[REDACTED:aws_access_key:1a2b3c4d]"}`),
		Output:    json.RawMessage(`{"only":"in the output"}`),
		RequestID: "req-only", Caller: "ops", ReasonCodes: []string{"code-only"},
	}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"", true},
		{"approval", true},        // reason, other case
		{"TOOLCALLREQUEST", true}, // event
		{"send_e", true},          // tool
		{"SESS-4", true},          // session
		{"AGENT-ω", true},         // agent, non-ASCII case
		{"external-EMAIL", true},  // policy
		{"bob@evil", true},        // input
		{`"to":"bob`, true},       // input as JSON text
		{`caf\u00E9`, true},       // escapes as stored
		{"café", false},           // not unescaped
		{"STRASSE", false},        // simple case mapping: ß is not ss
		{"STRAßE", true},
		{"redacted:aws", true},
		{"AKIA", false},          // the redacted value is not there
		{"in the output", false}, // output is not searched
		{"req-only", false},      // nor the request id
		{"ops", false},           // nor the caller
		{"code-only", false},     // nor the reason codes
		{"approval sess", false}, // one field at a time
	} {
		m := NewTextMatcher(tt.text)
		if got := m.Match(r); got != tt.want {
			t.Errorf("%q: Match = %v, want %v", tt.text, got, tt.want)
		}
		// Reused, it answers the same (its scratch buffer is reset).
		if got := m.Match(r); got != tt.want {
			t.Errorf("%q: second Match = %v, want %v", tt.text, got, tt.want)
		}
	}
	// A NUL matches nothing, not even a field that holds one.
	if m := NewTextMatcher("a\x00b"); m.Match(&Record{Reason: "a\x00b"}) {
		t.Error("a text with a NUL matched")
	}
	// Bytes that are not UTF-8 are kept, not replaced.
	if m := NewTextMatcher("\xff"); !m.Contains([]byte("a\xffb")) || m.Contains([]byte("a\uFFFDb")) {
		t.Error("invalid UTF-8 byte not matched as itself")
	}
}

// lowerAppend agrees with lower-casing rune by rune, whatever the
// alignment of ASCII runs and other runes.
func TestLowerAppend(t *testing.T) {
	for _, s := range []string{
		"", "A", "ABCDEFGH", "ABCDEFGHI", "@[`{AZaz09", "Hello, World! THE QUICK BROWN FOX",
		"ÄÖÜ ÀÉÎ ΣΑΣ ПРИВЕТ", "abcdefgÄbcdefghÖ", "\xffABCDEFGH\xfe", "STRAẞE Kelvin \u212a",
		strings.Repeat("MiXeD-Case_0123456789 ", 10) + "É",
	} {
		var want []byte
		for _, r := range s {
			if r == utf8.RuneError {
				continue
			}
			want = utf8.AppendRune(want, unicode.ToLower(r))
		}
		got := lowerAppend(nil, []byte(s))
		if utf8.ValidString(s) && string(got) != string(want) {
			t.Errorf("lowerAppend(%q) = %q, want %q", s, got, want)
		}
		if string(lowerInPlace([]byte(s))) != string(got) {
			t.Errorf("lowerInPlace(%q) = %q, want %q", s, lowerInPlace([]byte(s)), got)
		}
	}
	// Every ASCII byte in every position of a word.
	for c := 0; c < 128; c++ {
		for pos := 0; pos < 9; pos++ {
			b := []byte("xxxxxxxxx")
			b[pos] = byte(c)
			got := lowerAppend(nil, b)
			want := byte(c)
			if 'A' <= c && c <= 'Z' {
				want += 'a' - 'A'
			}
			if got[pos] != want {
				t.Fatalf("byte %#x at %d: got %#x, want %#x", c, pos, got[pos], want)
			}
		}
	}
}

func BenchmarkTextMatcher(b *testing.B) {
	in := []byte(`{"tool":"bash","arguments":{"command":"rm -rf /tmp/build && make","cwd":"/home/dev/project"},"context":"` +
		"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. " +
		"Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure " +
		"dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non " +
		"proident, sunt in culpa qui officia deserunt mollit anim id est laborum." + `"}`)
	m := NewTextMatcher("no such text")
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if m.Contains(in) {
			b.Fatal("match")
		}
	}
}
