package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/console"
)

// tenantTraffic is what one tenant's agent did: its markers (tool names,
// policy ids, session id, caller), its record and approval ids, and how
// many decisions it made.
type tenantTraffic struct {
	name      string
	markers   []string
	records   []string
	approvals []string
	decisions int
	rm        int // denials of the shared policy org-no-rm
}

// TestAttackOverviewOtherTenants walks every console page and every API a
// read token reaches — the routes the server's mux and the console
// register, found in their source — with the read tokens of two tenants
// whose agents both decided: no answer to one tenant's token carries the
// other's tool names, policy ids, sessions, callers, record or approval
// ids, and the figures (the overview's totals, rates, latencies, most
// denied tools and policies; the policies page's match counts) are the
// tenant's own. The open streams (runs, approvals) are read while the
// other tenant decides. The overview's figures were the whole server's.
func TestAttackOverviewOtherTenants(t *testing.T) {
	bin := wardenBinary(t)
	dir := t.TempDir()
	files := map[string]string{
		"shared/org.yaml": "id: org-no-rm\nversion: \"1\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"rm\"'\ndecision: deny\nreason: no rm\n",
	}
	for _, tn := range []string{"acme", "beta"} {
		files[tn+"/"+tn+".yaml"] = fmt.Sprintf("id: %[1]s-secret-policy\nversion: \"1\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"%[1]s-secret-tool\"'\ndecision: deny\nreason: not that\n"+
			"---\nid: %[1]s-ask-policy\nversion: \"1\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"%[1]s-ask-tool\"'\ndecision: ask\nreason: ask first\n", tn)
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	var entries strings.Builder
	for _, tk := range []struct{ name, scope, tenant string }{
		{"acme-agent", "decide", "acme"}, {"beta-agent", "decide", "beta"},
		{"acme-viewer", "read", "acme"}, {"beta-viewer", "read", "beta"}, {"ops-viewer", "read", ""},
	} {
		tok, sum, err := auth.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[tk.name] = tok
		fmt.Fprintf(&entries, "    - {name: %s, sha256: %s, scopes: [%s]", tk.name, sum, tk.scope)
		if tk.tenant != "" {
			fmt.Fprintf(&entries, ", tenant: %s", tk.tenant)
		}
		entries.WriteString("}\n")
	}
	cfg := filepath.Join(dir, "warden.yaml")
	conf := "policies: [./shared]\nauth:\n  tokens:\n" + entries.String() +
		"tenants:\n  acme: {policies: [./acme]}\n  beta: {policies: [./beta]}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, "--config", cfg, "--data", filepath.Join(dir, "data"))

	// The streams a viewer keeps open while both tenants decide.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type stream struct {
		viewer, path string
		mu           sync.Mutex
		body         strings.Builder
		done         chan struct{}
	}
	var streams []*stream
	for _, viewer := range []string{"acme-viewer", "beta-viewer"} {
		for _, path := range []string{"/api/runs/stream", "/api/approvals/stream"} {
			s := &stream{viewer: viewer, path: path, done: make(chan struct{})}
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.url+path, nil)
			req.Header.Set("Authorization", "Bearer "+tokens[viewer])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d", viewer, path, resp.StatusCode)
			}
			go func() {
				defer close(s.done)
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					s.mu.Lock()
					s.body.WriteString(sc.Text() + "\n")
					s.mu.Unlock()
				}
			}()
			streams = append(streams, s)
		}
	}

	// Each tenant's agent decides: its own denied and asked tools, the
	// shared policy's, an allowed one; beta more of each, so that figures
	// that mix the tenants show.
	traffic := map[string]*tenantTraffic{}
	for _, tc := range []struct {
		tenant string
		n      int
	}{{"acme", 1}, {"beta", 3}} {
		tn := tc.tenant
		tt := &tenantTraffic{name: tn, markers: []string{tn + "-secret-tool", tn + "-secret-policy", tn + "-ask-tool", tn + "-ask-policy",
			tn + "-session-1", tn + "-agent", tn + "-exec-"}}
		traffic[tn] = tt
		calls := []string{}
		for range tc.n {
			calls = append(calls, tn+"-secret-tool", "rm", "ls")
		}
		calls = append(calls, tn+"-ask-tool")
		for i, tool := range calls {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"%s-exec-%d","toolId":%q,"inputs":[{"name":"x","value":"%s-input"}]},"context":{"session":{"id":"%s-session-1"},"agent":{"id":"%s-bot","name":"%s-bot"}}}}`,
				i+1, tn, i, tool, tn, tn, tn, tn)
			code, b := send(t, "POST", srv.url+"/aos", "application/json", "", tokens[tn+"-agent"], body)
			if code != 200 {
				t.Fatalf("%s %s: %d %s", tn, tool, code, b)
			}
			var a aosAnswer
			if err := json.Unmarshal([]byte(b), &a); err != nil || a.Result.Data.TraceID == "" {
				t.Fatalf("%s %s: %s (%v)", tn, tool, b, err)
			}
			tt.decisions++
			tt.records = append(tt.records, a.Result.Data.TraceID)
			if tool == "rm" {
				tt.rm++
			}
			if id := a.Result.Data.ApprovalID; id != "" {
				tt.approvals = append(tt.approvals, id)
			}
		}
		if len(tt.approvals) != 1 {
			t.Fatalf("%s: approvals %v, want one pending", tn, tt.approvals)
		}
	}
	acme, beta := traffic["acme"], traffic["beta"]

	// The routes a read token reaches, as the mux and the console
	// register them: the walk below must cover every one.
	routes := registeredReadRoutes(t)

	type walk struct {
		path string
		// echo is text of the request the answer may repeat (an id or a
		// value the viewer asked for): not counted as a leak.
		echo []string
		want []int // accepted statuses
	}
	walkOf := func(own, other *tenantTraffic) []walk {
		ok, notFound := []int{200}, []int{404}
		return []walk{
			{path: "/", want: ok},
			{path: "/decisions", want: ok},
			{path: "/decisions/" + own.records[0], want: ok},
			{path: "/decisions/" + other.records[0], echo: []string{other.records[0]}, want: notFound},
			{path: "/sessions/" + own.name + "-session-1", want: ok},
			{path: "/sessions/" + other.name + "-session-1", echo: []string{other.name + "-session-1"}, want: ok},
			{path: "/approvals", want: ok},
			{path: "/approvals/" + own.approvals[0], want: ok},
			{path: "/approvals/" + other.approvals[0], echo: []string{other.approvals[0]}, want: notFound},
			{path: "/policies", want: ok},
			{path: "/policies?tenant=" + other.name, want: ok},
			{path: "/overview", want: ok},
			{path: "/login", want: ok},
			{path: "/static/console.css", want: ok},
			{path: "/api/hooks/runs?last=1000", want: ok},
			{path: "/api/hooks/runs?session=" + other.name + "-session-1", want: ok},
			{path: "/api/runs?limit=500", want: ok},
			{path: "/api/runs?tool=" + other.name + "-secret-tool", want: ok},
			{path: "/api/runs?policy=" + other.name + "-secret-policy", want: ok},
			{path: "/api/runs/" + own.records[0], want: ok},
			{path: "/api/runs/" + other.records[0], echo: []string{other.records[0]}, want: notFound},
			{path: "/api/hooks/events", want: ok},
			{path: "/api/hooks/catalog", want: ok},
			{path: "/api/approvals?limit=1000", want: ok},
			{path: "/api/approvals?session=" + other.name + "-session-1", want: ok},
			{path: "/api/approvals/" + own.approvals[0], want: ok},
			{path: "/api/approvals/" + other.approvals[0], echo: []string{other.approvals[0]}, want: notFound},
			{path: "/api/acs/sessions/" + other.name + "-session-1", echo: []string{other.name + "-session-1"}, want: notFound},
			{path: "/api/agbom", want: ok},
			{path: "/api/agbom?tenant=" + other.name, want: ok},
			{path: "/api/agbom?agent=" + other.name + "-bot", echo: []string{other.name + "-bot"}, want: notFound},
			{path: "/api/instances", want: []int{200, 404}},
			{path: "/metrics", want: []int{403}}, // every tenant's counts: not for a tenant's token
			{path: "/healthz", want: ok},
			{path: "/readyz", want: ok},
		}
	}
	// Every registered route is walked (the streams are read below).
	walked := []string{"/api/runs/stream", "/api/approvals/stream"}
	for _, w := range walkOf(acme, beta) {
		walked = append(walked, strings.SplitN(w.path, "?", 2)[0])
	}
	for _, rt := range routes {
		if !slices.ContainsFunc(walked, rt.MatchString) {
			t.Errorf("route %s is registered but not walked: add it to the walk", rt)
		}
	}

	leaks := func(viewer, what, body string, other *tenantTraffic, echo []string) {
		t.Helper()
		for _, e := range echo {
			body = strings.ReplaceAll(body, e, "")
		}
		for _, m := range append(append(append([]string{}, other.markers...), other.records...), other.approvals...) {
			if strings.Contains(body, m) {
				i := strings.Index(body, m)
				t.Errorf("%s: %s shows the other tenant's %q: …%s…", viewer, what, m, body[max(0, i-120):min(len(body), i+120)])
			}
		}
	}
	for _, v := range []struct {
		viewer     string
		own, other *tenantTraffic
	}{{"acme-viewer", acme, beta}, {"beta-viewer", beta, acme}} {
		for _, w := range walkOf(v.own, v.other) {
			code, body := getAs(t, srv.url+w.path, tokens[v.viewer])
			if !slices.Contains(w.want, code) {
				t.Errorf("%s GET %s: %d, want %v: %.300s", v.viewer, w.path, code, w.want, body)
			}
			leaks(v.viewer, "GET "+w.path, body, v.other, w.echo)
		}
		// The figures are the tenant's own: the overview's total, its most
		// denied tools and policies; the shared policy's match counts.
		_, ov := getAs(t, srv.url+"/overview", tokens[v.viewer])
		if got := kpiTotal(t, ov); got != v.own.decisions {
			t.Errorf("%s: the overview counts %d decisions, want the tenant's %d (both tenants: %d)", v.viewer, got, v.own.decisions, acme.decisions+beta.decisions)
		}
		for _, m := range []string{v.own.name + "-secret-tool", v.own.name + "-secret-policy"} {
			if !strings.Contains(ov, m) {
				t.Errorf("%s: the overview does not list the tenant's own %s", v.viewer, m)
			}
		}
		_, pol := getAs(t, srv.url+"/policies", tokens[v.viewer])
		if got := policyCounts(t, pol, "org-no-rm"); got[0] != v.own.rm || got[1] != v.own.rm {
			t.Errorf("%s: org-no-rm matched/decided %v in the last hour, want the tenant's %d", v.viewer, got, v.own.rm)
		}
	}
	// A viewer without a tenant sees every tenant's, as the runs API does.
	if _, ov := getAs(t, srv.url+"/overview", tokens["ops-viewer"]); kpiTotal(t, ov) != acme.decisions+beta.decisions {
		t.Errorf("ops-viewer: the overview counts %d decisions, want %d", kpiTotal(t, ov), acme.decisions+beta.decisions)
	}

	// The streams, open while both tenants decided.
	time.Sleep(1500 * time.Millisecond) // the runs feed polls the store
	cancel()
	for _, s := range streams {
		<-s.done
		s.mu.Lock()
		body := s.body.String()
		s.mu.Unlock()
		own, other := acme, beta
		if s.viewer == "beta-viewer" {
			own, other = beta, acme
		}
		if !strings.Contains(body, own.name+"-session-1") {
			t.Errorf("%s %s: the tenant's own events did not come: %.300s", s.viewer, s.path, body)
		}
		leaks(s.viewer, s.path, body, other, nil)
	}
}

// getAs GETs url with a bearer token, as a browser asks for a page.
func getAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	return send(t, "GET", url, "", "", token, "")
}

var kpiTotalRE = regexp.MustCompile(`id="kpi-total">(\d+)<`)

// kpiTotal is the overview's count of decisions.
func kpiTotal(t *testing.T, page string) int {
	t.Helper()
	m := kpiTotalRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no decision count on the overview: %.500s", page)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var numCellRE = regexp.MustCompile(`<td class="num">(\d+)</td>`)

// policyCounts are a policy's matched and decided counts of the last hour
// on the policies page (the row's number cells: priority, then the hour's
// and the day's).
func policyCounts(t *testing.T, page, id string) [2]int {
	t.Helper()
	i := strings.Index(page, "<code>"+id+"</code>")
	if i < 0 {
		t.Fatalf("policy %s not on the policies page", id)
	}
	row, _, _ := strings.Cut(page[i:], "</tr>")
	cells := numCellRE.FindAllStringSubmatch(row, -1)
	if len(cells) != 5 {
		t.Fatalf("policy %s: %d number cells in its row: %s", id, len(cells), row)
	}
	a, _ := strconv.Atoi(cells[1][1])
	b, _ := strconv.Atoi(cells[2][1])
	return [2]int{a, b}
}

// routeRE finds the patterns the server's mux registers.
var routeRE = regexp.MustCompile(`mux\.Handle(?:Func)?\("([^"]+)"`)

// registeredReadRoutes are the routes of the server's mux (server/*.go)
// and the console (console.Routes) a GET reaches, as regexps of paths,
// less those a read token cannot use (the deciding surfaces, pprof).
func registeredReadRoutes(t *testing.T) []*regexp.Regexp {
	t.Helper()
	srcs, err := filepath.Glob(filepath.Join("..", "server", "*.go"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("server sources: %v", err)
	}
	patterns := slices.Clone(console.Routes)
	for _, f := range srcs {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routeRE.FindAllStringSubmatch(string(b), -1) {
			patterns = append(patterns, m[1])
		}
	}
	var out []*regexp.Regexp
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		if method != "" && method != "GET" {
			continue
		}
		switch {
		case path == "/aos" || path == "/acs" || path == "/mcp/" || path == "/a2a/" || path == "/api/hooks/dispatch":
			continue // deciding surfaces: the decide scope
		case strings.HasPrefix(path, "/debug/pprof/"):
			continue // admin only, and off
		}
		re := regexp.QuoteMeta(path)
		re = strings.ReplaceAll(re, `\{\$\}`, "")
		re = regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(re, `[^/]+`)
		if strings.HasSuffix(path, "/") && !strings.HasSuffix(path, "{$}") {
			re += ".+"
		}
		out = append(out, regexp.MustCompile("^"+re+"$"))
	}
	if len(out) < 20 {
		t.Fatalf("found %d routes in the sources: the pattern no longer finds them", len(out))
	}
	return out
}
