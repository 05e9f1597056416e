package console

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/fleet/registry"

	"github.com/wardenhq/warden/fleet"
	"github.com/wardenhq/warden/storetest"
)

type fakeInstances struct {
	f   fleet.Fleet
	err error
}

func (f fakeInstances) List(context.Context) (fleet.Fleet, error) { return f.f, f.err }

// The overview lists the replicas, marks this one and a stale one, and
// flags the live replica whose policy revision differs from most.
func TestOverviewReplicas(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ins := []registry.Instance{
		{ID: "warden-a:8787", Addr: "10.0.0.1:8787", Version: "v1", PolicyRevision: "aaaaaaaaaaaaaaaaaaaa", Started: now, LastSeen: now},
		{ID: "warden-b:8787", Addr: "10.0.0.2:8787", Version: "v1", PolicyRevision: "aaaaaaaaaaaaaaaaaaaa", Started: now, LastSeen: now},
		{ID: "warden-c:8787", Addr: "10.0.0.3:8787", Version: "v1", PolicyRevision: "cccccccccccccccccccc", Started: now, LastSeen: now},
		{ID: "warden-d:8787", Addr: "10.0.0.4:8787", Version: "v0", PolicyRevision: "dddddddddddddddddddd", Started: now, LastSeen: now.Add(-time.Minute)},
	}
	f := fleet.Summarize(ins, "warden-a:8787", now, 15*time.Second, 5*time.Second)
	render := func(in Instances) string {
		c := New(Options{Store: storetest.NewMem(), Instances: in, Now: func() time.Time { return now }})
		w := httptest.NewRecorder()
		c.ServeHTTP(w, httptest.NewRequest("GET", "http://warden.test/overview", nil))
		if w.Code != 200 {
			t.Fatalf("overview: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	body := render(fakeInstances{f: f})
	for _, want := range []string{`<h2 id="replicas">`, "4 registered", "1 on other policies", `data-instance="warden-a:8787"`,
		`data-instance="warden-d:8787" class="stale muted"`, `data-instance="warden-c:8787" class="differs"`, "(this replica)", "aaaaaaaaaaaa…"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if n := strings.Count(body, ">policy differs</span>"); n != 1 {
		t.Errorf("%d replicas flagged, want 1 (warden-c; the stale one is not)", n)
	}
	if body := render(nil); strings.Contains(body, `id="replicas"`) {
		t.Error("replicas shown without a registry")
	}
	if body := render(fakeInstances{err: errors.New("store down")}); !strings.Contains(body, "listing the replicas: store down") {
		t.Error("a failing registry is not reported")
	}
}
