package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/fleet/registry"

	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/stream"
)

func get(t *testing.T, h http.Handler, path string) (int, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	return w.Code, body
}

func TestReadyz(t *testing.T) {
	m := storetest.NewMem()
	loaded := true
	lag := stream.Lag{Records: 42, Seconds: 3.5, Connected: false, Error: "dial tcp 10.0.0.9:4222: refused"}
	var logged []string
	rd := &fleet.Readiness{Store: m, Policies: func() bool { return loaded }, Stream: func() stream.Lag { return lag },
		Logf: func(f string, a ...any) { logged = append(logged, f) }}
	for _, tc := range []struct {
		name   string
		setup  func()
		code   int
		reason string
	}{
		{"ready", func() {}, 200, ""},
		{"store failing", func() { m.Err = errors.New("disk full at /secret/path") }, 503, fleet.ReasonStoreUnavailable},
		{"store back", func() { m.Err = nil }, 200, ""},
		{"policies not loaded", func() { loaded = false }, 503, fleet.ReasonNoPolicies},
		{"policies back", func() { loaded = true }, 200, ""},
	} {
		tc.setup()
		code, body := get(t, rd, "/readyz")
		if code != tc.code || body["ready"] != (tc.code == 200) || (tc.reason != "" && body["reason"] != tc.reason) {
			t.Errorf("%s: %d %v; want %d reason %q", tc.name, code, body, tc.code, tc.reason)
		}
		s, _ := body["stream"].(map[string]any)
		if s["records"] != 42.0 || s["seconds"] != 3.5 || s["connected"] != false {
			t.Errorf("%s: stream lag %v", tc.name, body["stream"])
		}
		raw, _ := json.Marshal(body)
		if strings.Contains(string(raw), "10.0.0.9") || strings.Contains(string(raw), "/secret/path") {
			t.Errorf("%s: /readyz is open and tells an error's detail: %s", tc.name, raw)
		}
	}
	if len(logged) != 2 {
		t.Errorf("logged %d times (%q), want once down and once back", len(logged), logged)
	}
	m.Close()
	if code, body := get(t, rd, "/readyz"); code != 503 || body["reason"] != fleet.ReasonStoreUnavailable {
		t.Errorf("closed store: %d %v", code, body)
	}
	if code, body := get(t, &fleet.Readiness{}, "/readyz"); code != 503 || body["reason"] != fleet.ReasonNoStore {
		t.Errorf("no store: %d %v", code, body)
	}
	if _, body := get(t, &fleet.Readiness{Store: storetest.NewMem()}, "/readyz"); body["stream"] != nil {
		t.Errorf("stream lag without a stream: %v", body)
	}
}

// slowStore is a store whose Ready hangs until its context ends.
type slowStore struct{ *storetest.Mem }

func (slowStore) Ready(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

func TestReadyzBounded(t *testing.T) {
	rd := &fleet.Readiness{Store: slowStore{storetest.NewMem()}, Timeout: 50 * time.Millisecond}
	start := time.Now()
	if code, _ := get(t, rd, "/readyz"); code != 503 {
		t.Errorf("hanging store: %d, want 503", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("readyz took %v with a 50ms bound", d)
	}
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	m := storetest.NewMem()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rev := map[string]string{"a": "r1", "b": "r1", "c": "r2"}
	regs := map[string]*fleet.Registry{}
	for _, id := range []string{"a", "b", "c"} {
		regs[id] = fleet.NewRegistry(m.Reopen(), registry.Instance{ID: id, Addr: id + ":8787", Version: "v1"},
			fleet.RegistryOptions{Heartbeat: time.Second, Stale: 3, Now: clock, Revision: func() string { return rev[id] }})
		if err := regs[id].Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	code, body := get(t, regs["a"], "/api/instances")
	if code != 200 {
		t.Fatalf("%d %v", code, body)
	}
	var f fleet.Fleet
	raw, _ := json.Marshal(body)
	_ = json.Unmarshal(raw, &f)
	if len(f.Instances) != 3 || f.PolicyRevision != "r1" || f.StaleAfter != 3 {
		t.Fatalf("fleet %+v", f)
	}
	for _, v := range f.Instances {
		if v.Stale || v.Self != (v.ID == "a") || v.PolicyDiffers != (v.ID == "c") || v.Addr != v.ID+":8787" ||
			!v.LastSeen.Equal(now) || !v.Started.Equal(now) || v.Version != "v1" {
			t.Errorf("instance %+v", v)
		}
	}
	for _, k := range []string{"id", "addr", "version", "policy_revision", "started", "last_seen", "stale", "policy_differs"} {
		if _, ok := body["instances"].([]any)[0].(map[string]any)[k]; !ok {
			t.Errorf("instance without %q: %v", k, body["instances"])
		}
	}
	// b and c stop; a beats on: after 3 heartbeats they are stale, and a
	// stale replica's revision neither counts nor is flagged.
	now = now.Add(3500 * time.Millisecond)
	_ = regs["a"].Beat(ctx)
	f, err := regs["a"].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f.Instances {
		if v.Stale != (v.ID != "a") || v.PolicyDiffers {
			t.Errorf("after 3.5s: %+v", v)
		}
	}
	// The registry changed its policies: the new revision is stored.
	rev["a"] = "r3"
	_ = regs["a"].Beat(ctx)
	if f, _ = regs["a"].List(ctx); f.Instances[0].PolicyRevision != "r3" {
		t.Errorf("revision not updated: %+v", f.Instances[0])
	}
	w := httptest.NewRecorder()
	regs["a"].ServeHTTP(w, httptest.NewRequest("GET", "/api/instances?x=1", nil))
	if w.Code != 400 {
		t.Errorf("a parameter: %d", w.Code)
	}
	m.Err = nil
	m.Close()
	closed := fleet.NewRegistry(m, registry.Instance{ID: "z"}, fleet.RegistryOptions{})
	if err := closed.Beat(ctx); err == nil {
		t.Error("heartbeat to a closed store: nil")
	}
	if code, _ := get(t, closed, "/api/instances"); code != 503 {
		t.Errorf("closed store: %d", code)
	}
}

func TestRegistryRun(t *testing.T) {
	m := storetest.NewMem()
	g := fleet.NewRegistry(m, registry.Instance{ID: "a"}, fleet.RegistryOptions{Heartbeat: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Run(ctx); close(done) }()
	time.Sleep(50 * time.Millisecond)
	ins, _ := m.Instances(context.Background())
	if len(ins) != 1 || time.Since(ins[0].LastSeen) > time.Second {
		t.Errorf("after running: %+v", ins)
	}
	first := ins[0].LastSeen
	time.Sleep(30 * time.Millisecond)
	ins, _ = m.Instances(context.Background())
	if !ins[0].LastSeen.After(first) {
		t.Error("no second heartbeat")
	}
	cancel()
	<-done
}

func TestSummarizeTie(t *testing.T) {
	now := time.Now()
	f := fleet.Summarize([]registry.Instance{{ID: "a", PolicyRevision: "y", LastSeen: now}, {ID: "b", PolicyRevision: "x", LastSeen: now}},
		"a", now, time.Second, time.Second)
	if f.PolicyRevision != "x" || !f.Instances[0].PolicyDiffers || f.Instances[1].PolicyDiffers {
		t.Errorf("tie: %+v", f)
	}
	if f := fleet.Summarize(nil, "a", now, time.Second, time.Second); f.Instances == nil || len(f.Instances) != 0 {
		t.Errorf("empty: %+v", f)
	}
}
