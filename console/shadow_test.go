package console

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// shadowConsole is a console whose set has a shadow set (the pack plus
// cand-allow-deploy and cand-deny-rm) over a trace of records decided
// beside it: two that disagree in the last day, one that agrees, one
// without a shadow set and one disagreeing two days ago.
func shadowConsole(t *testing.T) *Console {
	t.Helper()
	st := storetest.NewMem()
	now := t0.Add(30 * time.Minute)
	sum := func(v, by string) warden.Result {
		return warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, PolicyID: by, Decision: v, Mode: warden.ModeShadow}
	}
	per := func(id, v string) warden.Result {
		return warden.Result{Guardian: warden.GuardianShadow, PolicyID: id, Decision: v, Mode: warden.ModeShadow}
	}
	live := func(id, v string) warden.Result {
		return warden.Result{Guardian: "policy", PolicyID: id, Decision: v, Mode: "enforce"}
	}
	for _, r := range []*audit.Record{
		{ID: "d-deploy", Time: now.Add(-time.Hour), Decision: "deny", PolicyID: "no-deploy",
			Results: []warden.Result{live("no-deploy", "deny"), per("cand-allow-deploy", "allow"), sum("allow", "cand-allow-deploy")}},
		{ID: "d-rm", Time: now.Add(-2 * time.Hour), Decision: "allow",
			Results: []warden.Result{per("cand-deny-rm", "deny"), sum("deny", "cand-deny-rm")}},
		{ID: "d-agree", Time: now.Add(-3 * time.Hour), Decision: "allow", Results: []warden.Result{sum("allow", "")}},
		{ID: "d-none", Time: now.Add(-4 * time.Hour), Decision: "deny", Results: []warden.Result{live("x", "deny")}},
		{ID: "d-old", Time: now.Add(-48 * time.Hour), Decision: "allow",
			Results: []warden.Result{per("cand-deny-rm", "deny"), sum("deny", "cand-deny-rm")}},
	} {
		r.Event, r.Surface = "steps/toolCallRequest", "aos"
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	live0, err := policy.LoadSet(policy.Spec{Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cand.yaml")
	if err := os.WriteFile(file, []byte(
		"id: cand-allow-deploy\nversion: \"1\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"deploy\"'\ndecision: allow\n---\n"+
			"id: cand-deny-rm\nversion: \"2\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"rm\"'\ndecision: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cand, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Store: st, Now: func() time.Time { return now },
		Policies: engines{e: policy.NewEngine(live0, policy.Options{}), shadow: policy.NewEngine(cand, policy.Options{})}})
}

func TestShadowPages(t *testing.T) {
	c := shadowConsole(t)
	tests := []struct {
		path   string
		code   int
		want   []string
		reject []string
	}{
		{"/policies", 200, []string{`<h2 id="shadow">Shadow set</h2>`, `<a href="/decisions?disagree=shadow&amp;since=24h">2 decisions</a> of the last 24h`,
			"live allow → shadow deny: 1", "live deny → shadow allow: 1", "cand-allow-deploy", "cand.yaml:1</code>", "cand.yaml:7</code>",
			`<code>cand-deny-rm</code> <span class="muted">v2</span>`}, []string{"at least"}},
		{"/decisions?disagree=shadow&since=24h", 200, []string{`data-id="d-deploy"`, `data-id="d-rm"`, `shadow: allow</span>`, `<option value="shadow" selected>`},
			[]string{`data-id="d-agree"`, `data-id="d-none"`, `data-id="d-old"`}},
		{"/decisions?disagree=shadow", 200, []string{`data-id="d-old"`}, []string{`data-id="d-agree"`}},
		{"/decisions", 200, []string{`data-id="d-agree"`, `shadow: deny</span>`}, nil},
		{"/decisions?disagree=live", 400, []string{"disagree: expected shadow"}, nil},
		{"/decisions/d-deploy", 200, []string{`<tr class="shadow">`, "shadow set: not applied", "shadow: not applied", "cand-allow-deploy"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			c.ServeHTTP(w, httptest.NewRequest("GET", "http://warden.test"+tt.path, nil))
			body := w.Body.String()
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %.500s", w.Code, tt.code, body)
			}
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("missing %q", s)
				}
			}
			for _, s := range tt.reject {
				if strings.Contains(body, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
}

// The per-policy counts of the shadow set: matched and decided in the
// disagreeing records of the last day only.
func TestShadowCounts(t *testing.T) {
	c := shadowConsole(t)
	d := c.shadowSection(context.Background(), "")
	if d == nil || d.Err != "" || d.Disagreed != 2 || d.Partial {
		t.Fatalf("section %+v", d)
	}
	got := map[string][2]int{}
	for _, r := range d.Rows {
		got[r.P.ID] = [2]int{r.Matched, r.Decided}
	}
	if got["cand-allow-deploy"] != [2]int{1, 1} || got["cand-deny-rm"] != [2]int{1, 1} {
		t.Fatalf("counts %v", got)
	}
	if c.shadowSection(context.Background(), "acme") != nil {
		t.Fatal("a set without a shadow set has a section")
	}
}
