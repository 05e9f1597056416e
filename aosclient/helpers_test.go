package aosclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/internal/sharedtest"

	"github.com/wardenhq/warden"
)

// guardian is a fake remote Guardian: it decodes each request, hands it to
// reply and answers with what reply returns (encoded as JSON, unless it is
// a string, which is sent as is).
type guardian struct {
	*httptest.Server
	calls atomic.Int32
	last  atomic.Pointer[map[string]any]
}

func newGuardian(t *testing.T, reply func(req map[string]any) any) *guardian {
	t.Helper()
	g := &guardian{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.calls.Add(1)
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, "bad request", 400)
			return
		}
		var kept map[string]any // a copy reply cannot change
		json.Unmarshal(b, &kept)
		g.last.Store(&kept)
		switch v := reply(req).(type) {
		case string:
			io.WriteString(w, v)
		default:
			json.NewEncoder(w).Encode(v)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

// lastRequest returns the last request the guardian received.
func (g *guardian) lastRequest() map[string]any {
	if p := g.last.Load(); p != nil {
		return *p
	}
	return nil
}

// respond wraps a result in a response to req.
func respond(req map[string]any, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": result}
}

// seedResponse returns a response file of the Joch seed, its id replaced by
// req's.
func seedResponse(t *testing.T, name string) func(req map[string]any) any {
	t.Helper()
	var resp map[string]any
	readJSON(t, name, &resp)
	return func(req map[string]any) any {
		resp["id"] = req["id"]
		return resp
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(shared(t, "aos", "examples", name))
	if err != nil {
		t.Fatalf("seed example %s: %v (WARDEN_SHARED)", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// seedEvent returns the event the AOS endpoint would make of an example
// request file: its params (or the message they wrap) as payload and raw.
func seedEvent(t *testing.T, name, surface string) *warden.Event {
	t.Helper()
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	readJSON(t, name, &req)
	ev := &warden.Event{Name: req.Method, Surface: surface, Raw: req.Params}
	if err := json.Unmarshal(req.Params, &ev.Payload); err != nil {
		t.Fatal(err)
	}
	return ev
}

// get walks a decoded JSON value along a path of keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustJSON decodes s.
func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decide(t *testing.T, url string, ev *warden.Event) (warden.Decision, error) {
	t.Helper()
	c, err := New(Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Decide(context.Background(), ev)
}

// shared is sharedtest.Path: rel inside WARDEN_SHARED, or a skip.
func shared(t testing.TB, rel ...string) string { t.Helper(); return sharedtest.Path(t, rel...) }
