package mcpgate

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/jsontest"
)

// The duplicate-key bypass (issue 7, measurement 2): policies saw the last
// value, the raw bytes with the AWS key went upstream. Now such a message is
// refused with -32600 naming the path and never reaches the server.
func TestStdioAmbiguousJSONNeverForwarded(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"duplicate key", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"AKIAIOSFODNN7EXAMPLE","text":"x"}}}`,
			`duplicate key "text" in params.arguments`},
		{"keys differing in case", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","Name":"send_email"}}`,
			`keys "name" and "Name" differ only in case in params`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"AKIA\xffIOSFODNN7EXAMPLE\"}}}",
			`invalid UTF-8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := startRaw(t, 4<<20)
			writeLine(t, e.toGW, c.line)
			m := readMsg(t, e.fromGW)
			msg, _ := m["error"].(map[string]any)["message"].(string)
			if errCode(m) != CodeInvalidRequest || m["id"] != float64(11) || !strings.Contains(msg, c.want) {
				t.Fatalf("client got %v, want -32600 for id 11 naming %q", m, c.want)
			}
			writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":12,"method":"ping"}`)
			if s := readMsg(t, e.srvIn); s["id"] != float64(12) {
				t.Fatalf("the server got %v first: the ambiguous message was forwarded", s)
			}
		})
	}
	t.Run("ambiguous answer from the server", func(t *testing.T) {
		e := startRaw(t, 4<<20)
		writeLine(t, e.toGW, `{"jsonrpc":"2.0","id":13,"method":"tools/list"}`)
		readMsg(t, e.srvIn)
		writeLine(t, e.srvOut, `{"jsonrpc":"2.0","id":13,"result":{"tools":[{"name":"t","description":"ok","description":"POISONED"}]}}`)
		if m := readMsg(t, e.fromGW); errCode(m) != CodeUpstream || m["id"] != float64(13) {
			t.Fatalf("client got %v, want CodeUpstream for id 13", m)
		}
	})
}

func TestHTTPAmbiguousJSONNeverForwarded(t *testing.T) {
	var mu sync.Mutex
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer up.Close()
	dec, _ := testDecider(t)
	front := httptest.NewServer(NewHTTP(dec, map[string]warden.Upstream{"up": {URL: up.URL}}, HTTPOptions{Logf: t.Logf}))
	defer front.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"k":"AKIAIOSFODNN7EXAMPLE","k":"x"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","NAME":"wire_money"}}]`,
	} {
		status, resp := rawPost(t, front.URL+"/mcp/up", body, nil)
		if status != http.StatusOK || !strings.Contains(resp, `"code":-32600`) || !strings.Contains(resp, "differ only in case") && !strings.Contains(resp, "duplicate key") {
			t.Fatalf("%d %s", status, resp)
		}
	}
	// An empty batch is one invalid request: one error object, not [].
	if status, resp := rawPost(t, front.URL+"/mcp/up", `[]`, nil); !strings.HasPrefix(strings.TrimSpace(resp), "{") || !strings.Contains(resp, `"code":-32600`) {
		t.Fatalf("empty batch: %d %s", status, resp)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Fatalf("forwarded upstream: %q", got)
	}
}

// FuzzForwardedIsDecided: for any line or body, every message the gateway
// would forward unchanged (its raw bytes) reads, first-wins and last-wins
// alike, as exactly the payload the policies decided on.
func FuzzForwardedIsDecided(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"k":"AKIA","k":"x"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b","params":{"X":1,"x":2}}]`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\ud800"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/x","params":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _, _, err := parse(data, 0)
		if err != nil {
			return
		}
		for _, msg := range msgs {
			var last any
			if err := json.Unmarshal(msg.raw, &last); err != nil {
				t.Fatalf("forwarded bytes do not decode: %v", err)
			}
			first := jsontest.FirstWins(msg.raw)
			// Numbers: Token gives float64 too, as Unmarshal does.
			if !reflect.DeepEqual(last, any(msg.m)) || !reflect.DeepEqual(first, last) {
				t.Fatalf("forwarded %s reads as %v / %v, decided on %v", msg.raw, first, last, msg.m)
			}
		}
	})
}
