package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

func newTestServer(t *testing.T) (*httptest.Server, audit.Store, *Metrics) {
	t.Helper()
	m := NewMetrics()
	st, err := sqlite.Open(t.TempDir(), sqlite.Options{OnBatch: m.ObserveBatch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	aosStub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(New(Options{Routes: []Route{aos.Route(aosStub)}, Store: st, Metrics: m}))
	t.Cleanup(srv.Close)
	return srv, st, m
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunsAPI(t *testing.T) {
	srv, st, _ := newTestServer(t)
	ctx := context.Background()
	for i, r := range []struct{ session, event, decision string }{
		{"a", "steps/toolCallRequest", "allow"},
		{"a", "steps/message", "deny"},
		{"b", "steps/toolCallRequest", "deny"},
		{"b", "protocols/MCP", "modify"},
	} {
		rec := &audit.Record{ID: r.session + r.event + r.decision, Time: time.Unix(int64(100+i), 0),
			Event: r.event, Surface: "aos", SessionID: r.session, Decision: r.decision,
			Input: json.RawMessage(`{"k":"v"}`), Results: []warden.Result{{Guardian: "policy", Decision: r.decision}}}
		if err := st.Record(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query string
		code  int
		ids   []string
	}{
		{"", 200, []string{"bprotocols/MCPmodify", "bsteps/toolCallRequestdeny", "asteps/messagedeny", "asteps/toolCallRequestallow"}},
		{"?session=a", 200, []string{"asteps/messagedeny", "asteps/toolCallRequestallow"}},
		{"?event=steps/toolCallRequest&decision=deny", 200, []string{"bsteps/toolCallRequestdeny"}},
		{"?last=1", 200, []string{"bprotocols/MCPmodify"}},
		{"?session=none", 200, []string{}},
		{"?last=0", 400, nil},
		{"?last=x", 400, nil},
		{"?decision=block", 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, body := get(t, srv.URL+"/api/hooks/runs"+tt.query)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, body)
			}
			if tt.code != 200 {
				if !strings.Contains(body, `"error"`) {
					t.Fatalf("error body: %s", body)
				}
				return
			}
			var recs []audit.Record
			if err := json.Unmarshal([]byte(body), &recs); err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.ids, ",") {
				t.Fatalf("ids %v, want %v", ids, tt.ids)
			}
		})
	}
	// The store's batch callback feeds the metrics.
	_, metrics := get(t, srv.URL+"/metrics")
	if !strings.Contains(metrics, "warden_trace_batch_size_count") || strings.Contains(metrics, "warden_trace_batch_size_count 0") {
		t.Fatalf("batch metrics missing:\n%s", grepLines(metrics, "warden_trace"))
	}
}

func TestHealthMetricsUIAndRouting(t *testing.T) {
	srv, _, m := newTestServer(t)
	ev := &warden.Event{Name: "steps/message"}
	m.Observe(ev, &warden.Outcome{Verdict: warden.Deny, Latency: 40 * time.Microsecond}, nil)
	m.Observe(ev, &warden.Outcome{Verdict: warden.Deny}, audit.ErrUnavailable)
	if code, body := get(t, srv.URL+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("healthz %d %q", code, body)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`warden_decisions_total{decision="deny",event="steps/message"} 2`,
		`warden_decision_duration_seconds_bucket{event="steps/message",le="5e-05"} 2`,
		`warden_trace_record_errors_total 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(metrics, "warden_"))
		}
	}
	if code, body := get(t, srv.URL+"/"); code != 200 || !strings.Contains(body, "<h1>Decisions</h1>") {
		t.Fatalf("console %d: %.300s", code, body)
	}
	if code, _ := get(t, srv.URL+"/aos"); code != http.StatusTeapot {
		t.Fatalf("/aos not routed to the AOS handler: %d", code)
	}
	if code, _ := get(t, srv.URL+"/nope"); code != 404 {
		t.Fatalf("unknown path %d", code)
	}
	if code, _ := get(t, srv.URL+"/debug/pprof/"); code != 404 {
		t.Fatalf("pprof must be off by default: %d", code)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestDNSRebindingGuard(t *testing.T) {
	srv, _, _ := newTestServer(t) // listens on 127.0.0.1
	for _, tt := range []struct {
		host string
		code int
	}{
		{"", 200}, // the client's own 127.0.0.1:port
		{"localhost:8787", 200},
		{"[::1]:8787", 200},
		{"evil.example.com", 403},
		{"evil.example.com:8787", 403},
		{"10.0.0.1", 403},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/healthz", nil)
		if tt.host != "" {
			req.Host = tt.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("Host %q: %d, want %d", tt.host, resp.StatusCode, tt.code)
		}
	}
}
