package fleet_test

import (
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/fleet/registry"

	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/stream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s changed:\n%s\nwant:\n%s", name, got, want)
	}
}

// The wire formats of GET /readyz and GET /api/instances.
func TestGolden(t *testing.T) {
	m := storetest.NewMem()
	lag := stream.Lag{Records: 12, Seconds: 1.5, Connected: true, Publishing: true, Acked: "0199-acked", Published: 7833}
	rd := &fleet.Readiness{Store: m, Stream: func() stream.Lag { return lag }}
	w := httptest.NewRecorder()
	rd.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	golden(t, "readyz_ok.json", w.Body.Bytes())
	m.Err = errUnavailable
	w = httptest.NewRecorder()
	rd.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	golden(t, "readyz_unavailable.json", w.Body.Bytes())
	m.Err = nil

	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, in := range []registry.Instance{
		{ID: "warden-a:8787", Addr: "10.0.0.1:8787", Version: "0.1.0", PolicyRevision: "5d1c", Started: now.Add(-time.Hour), LastSeen: now},
		{ID: "warden-b:8787", Addr: "10.0.0.2:8787", Version: "0.1.0", PolicyRevision: "77ab", Started: now.Add(-time.Hour), LastSeen: now},
		{ID: "warden-c:8787", Addr: "10.0.0.3:8787", Version: "0.1.0", PolicyRevision: "5d1c", Started: now.Add(-time.Hour), LastSeen: now.Add(-time.Minute)},
		{ID: "warden-d:8787", Addr: "10.0.0.4:8787", Version: "0.1.0", PolicyRevision: "5d1c", Started: now.Add(-time.Hour), LastSeen: now},
	} {
		if err := m.Heartbeat(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	g := fleet.NewRegistry(m, registry.Instance{ID: "warden-a:8787"}, fleet.RegistryOptions{Now: func() time.Time { return now }})
	w = httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest("GET", "/api/instances", nil))
	golden(t, "instances.json", w.Body.Bytes())
}

var errUnavailable = errorString("connection refused")

type errorString string

func (e errorString) Error() string { return string(e) }
