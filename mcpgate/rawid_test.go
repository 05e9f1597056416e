package mcpgate

import (
	"strings"
	"testing"
	"time"
)

// TestStdioIDsEchoedAsSent: the gateway's own answers (a deny, a refusal)
// carry the request's id byte for byte, as jsonrpc keeps it: a number is
// not rewritten through float64 (1.50 stays 1.50, a 20-digit id keeps its
// digits) and a string keeps its escapes.
func TestStdioIDsEchoedAsSent(t *testing.T) {
	for _, id := range []string{`1.50`, `12345678901234567890`, `"a\u0062c"`} {
		t.Run(id, func(t *testing.T) {
			e := startRaw(t, 4<<20)
			writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"wire_money"}}`)
			writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","name":"x"}}`)
			codes := map[string]bool{}
			for range 2 { // the refusal and the deny, in either order
				select {
				case l := <-e.fromGW:
					if !strings.Contains(string(l), `"id":`+id+`,`) {
						t.Fatalf("client got %s, want the id %s as sent", l, id)
					}
					for _, c := range []string{"-31900", "-32600"} {
						codes[c] = codes[c] || strings.Contains(string(l), `"code":`+c+`,`)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no answer")
				}
			}
			if !codes["-31900"] || !codes["-32600"] {
				t.Fatalf("answers %v, want a deny and a refusal", codes)
			}
		})
	}
}
