package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/stats"
	"github.com/wardenhq/warden/storetest"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// fixture is a console over an in-memory trace and approvals.
type fixture struct {
	st  *storetest.Mem
	obs *stats.Observer
	c   *Console
	ids map[string]string // named records' ids
}

// engines is the Policies of a test: the built-in pack and one audit
// policy, and a shadow set when shadow is set.
type engines struct{ e, shadow *policy.Engine }

func (p engines) Policies() *policy.Set                   { return p.e.Set() }
func (p engines) TenantPolicies(string) *policy.Set       { return nil }
func (p engines) ReloadStatus(string) policy.ReloadStatus { return p.e.Status() }

func (p engines) ShadowPolicies(tenant string) *policy.Set {
	if p.shadow == nil || tenant != "" {
		return nil
	}
	return p.shadow.Set()
}

func (p engines) ShadowReloadStatus(string) policy.ReloadStatus {
	if p.shadow == nil {
		return policy.ReloadStatus{}
	}
	return p.shadow.Status()
}

// memApprovals lists the Mem's approvals as an *approval.Manager would.
type memApprovals struct{ st *storetest.Mem }

func (m memApprovals) List(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error) {
	return m.st.ListApprovals(ctx, q)
}

func (m memApprovals) Get(ctx context.Context, id, tenant string) (*approval.Approval, error) {
	a, err := m.st.Approval(ctx, id)
	if err == nil && tenant != "" && a.Tenant != tenant {
		return nil, approval.ErrApprovalNotFound
	}
	return a, err
}

func rec(id, event, surface, decision, policyID, session string, at time.Time, input string) *audit.Record {
	return &audit.Record{ID: id, Time: at, Event: event, Surface: surface, Decision: decision, PolicyID: policyID,
		SessionID: session, Reason: decision + " by " + policyID, LatencyUS: 42, Input: json.RawMessage(input),
		Results: []warden.Result{}}
}

func newFixture(t *testing.T, extra int) *fixture {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewMem()
	f := &fixture{st: st, obs: stats.New(func() time.Time { return t0.Add(30 * time.Minute) }), ids: map[string]string{}}
	add := func(name string, r *audit.Record) {
		if err := st.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		f.ids[name] = r.ID
	}
	deny := rec("r-deny", "steps/toolCallRequest", "aos", "deny", "deny-secrets", "s1", t0, `{"toolCallRequest":{"toolId":"http_post"}}`)
	deny.Views = json.RawMessage(`{"tool":{"name":"http_post","server":""}}`)
	deny.Results = []warden.Result{
		{Guardian: "policy", PolicyID: "deny-secrets", PolicyVersion: "2", Decision: "deny", Mode: "enforce", Reason: "a secret", LatencyUS: 12},
		{Guardian: "policy", PolicyID: "watch-http", PolicyVersion: "1", Decision: "deny", Mode: "audit", Reason: "would deny", LatencyUS: 3},
		{Guardian: "hook", Kind: "webhook", Decision: "", Mode: "enforce", Error: "timeout after 50ms", LatencyUS: 50000},
	}
	deny.PolicyRevision, deny.Caller, deny.Tenant, deny.Tool = "abc123def4567890", "agents", "", "http_post"
	add("deny", deny)
	mcp := rec("r-mcp", "protocols/MCP", "mcp", "ask", "email-needs-approval", "s1", t0.Add(time.Second),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"bob@example.com"}}}`)
	mcp.Direction, mcp.Views, mcp.ApprovalID, mcp.Tool = "outbound", json.RawMessage(`{"tool":{"name":"send_email","server":"mail"}}`), "ap-1", "send_email"
	add("mcp", mcp)
	mod := rec("r-mod", "steps/message", "aos", "modify", "redact-cards", "s2", t0.Add(2*time.Second),
		`{"message":{"role":"agent","text":"card 4111"}}`)
	mod.Output = json.RawMessage(`{"message":{"role":"agent","text":"card [REDACTED]"}}`)
	add("modify", mod)
	other := rec("r-acme", "steps/message", "aos", "allow", "", "s3", t0.Add(3*time.Second), `{}`)
	other.Tenant = "acme"
	add("acme", other)
	for i := range extra {
		add(fmt.Sprint("x", i), rec(fmt.Sprintf("x-%04d", i), "steps/message", "hooks", "allow", "", "bulk", t0.Add(time.Duration(4+i)*time.Second), `{}`))
	}
	for _, a := range []approval.Approval{
		{ID: "ap-1", State: approval.ApprovalPending, Event: "protocols/MCP", Surface: "mcp", SessionID: "s1", Tool: "send_email",
			Summary: `mail/send_email {"to":"bob@example.com"}`, Reason: "email needs approval", PolicyID: "email-needs-approval",
			Created: t0.Add(1500 * time.Millisecond), Expires: t0.Add(time.Hour), RecordID: "r-mcp", Hold: true, Key: "k1"},
		{ID: "ap-0", State: approval.ApprovalPending, Event: "steps/toolCallRequest", Surface: "aos", SessionID: "s2", Tool: "wire_money",
			Summary: "wire_money {}", Reason: "money", PolicyID: "money", Created: t0.Add(-time.Minute), Expires: t0.Add(time.Hour), Key: "k0"},
	} {
		if err := st.CreateApproval(ctx, &a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DecideApproval(ctx, "ap-0", approval.ApprovalDenied, "ops", "not today", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadSet(policy.Spec{Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"deny-secrets-in-tool-calls", "deny-secrets-in-tool-calls", "redact-financial-pii-in-answers"} {
		f.obs.Observe(&warden.Event{Name: "steps/toolCallRequest", Tool: warden.Tool{Name: "http_post"}},
			&warden.Outcome{Verdict: warden.Deny, PolicyID: p, Latency: 40 * time.Microsecond,
				Results: []warden.Result{{PolicyID: p, Mode: "enforce"}}}, nil)
	}
	f.c = New(Options{Store: st, Approvals: memApprovals{st}, Stats: f.obs,
		Policies: engines{e: policy.NewEngine(set, policy.Options{})}, RunsStream: "/api/runs/stream", Now: func() time.Time { return t0.Add(30 * time.Minute) }})
	return f
}

// get requests path as a principal with scopes (nil: no auth).
func (f *fixture) get(t *testing.T, path string, p *warden.Principal, scopes auth.Scope) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", "http://warden.test"+path, nil)
	if p != nil {
		ctx := warden.WithPrincipal(r.Context(), *p)
		r = r.WithContext(auth.WithScopes(ctx, scopes))
	}
	w := httptest.NewRecorder()
	f.c.ServeHTTP(w, r)
	return w
}

var (
	inlineScript = regexp.MustCompile(`<script(?:\s+[^>]*)?>\s*[^<\s]`)
	styleAttr    = regexp.MustCompile(`\sstyle=`)
	eventAttr    = regexp.MustCompile(`\son[a-z]+=`)
)

func TestPages(t *testing.T) {
	f := newFixture(t, 0)
	tests := []struct {
		path   string
		code   int
		want   []string
		reject []string
	}{
		{"/", 200, []string{"<h1>Decisions</h1>", `data-live="decisions"`, `data-stream="/api/runs/stream"`, "r-deny", "r-mcp", "r-mod"}, nil},
		{"/decisions?surface=aos", 200, []string{`data-stream="/api/runs/stream?surface=aos"`}, nil},
		{"/decisions?decision=deny", 200, []string{"r-deny"}, []string{`data-id="r-mcp"`, `data-id="r-mod"`}},
		{"/decisions?surface=mcp", 200, []string{"r-mcp"}, []string{`data-id="r-deny"`}},
		{"/decisions?session=s2", 200, []string{"r-mod"}, []string{`data-id="r-deny"`}},
		{"/decisions?policy=deny-secrets&event=steps/toolCallRequest", 200, []string{"r-deny"}, []string{`data-id="r-mcp"`}},
		{"/decisions?since=2026-11-21T10:00:01.5Z", 200, []string{"r-mod"}, []string{`data-id="r-deny"`, `data-id="r-mcp"`}},
		{"/decisions?until=2026-11-21T10:00:01Z", 200, []string{"r-deny"}, []string{`data-id="r-mcp"`}},
		{"/decisions?tool=send_email", 200, []string{`data-id="r-mcp"`}, []string{`data-id="r-deny"`, `data-id="r-mod"`}},
		{"/decisions?q=BOB@EXAMPLE", 200, []string{`data-id="r-mcp"`}, []string{`data-id="r-deny"`, `data-id="r-mod"`}},
		{"/decisions?q=card+4111", 200, []string{`data-id="r-mod"`}, []string{`data-id="r-mcp"`}},
		{"/decisions?tool=http_post&q=nothing-like-this", 200, []string{"no decision matches these filters"}, nil},
		{"/decisions?decision=maybe", 400, []string{"decision: expected one of"}, nil},
		{"/decisions?since=yesterday", 400, []string{"since: expected a time"}, nil},
		{"/decisions?after=nope", 400, []string{"cursor"}, nil},
		// MCP rows name the JSON-RPC method and the tool, not protocols/MCP.
		{"/decisions?surface=mcp", 200, []string{`<span class="method">tools/call</span>`, `<span class="tool">mail/send_email</span>`}, nil},
		{"/decisions/r-deny", 200, []string{"deny-secrets", "watch-http", "audit: not applied", "timeout after 50ms", "abc123def456…", "agents", "webhook"}, nil},
		{"/decisions/r-mcp", 200, []string{`href="/approvals/ap-1"`, "tools/call", "outbound"}, nil},
		{"/decisions/r-mod", 200, []string{"Change (modify)", `<span class="del">-     &#34;text&#34;: &#34;card 4111&#34;`, `<span class="ins">&#43;     &#34;text&#34;: &#34;card [REDACTED]&#34;`}, nil},
		{"/decisions/r-acme", 200, []string{"acme"}, nil},
		{"/decisions/missing", 404, []string{"no decision missing"}, nil},
		{"/sessions/s1", 200, []string{"r-deny", "approval <a href=\"/approvals/ap-1\">", "watch-http"}, []string{"r-mod"}},
		{"/sessions/none", 200, []string{"no decision of this session"}, nil},
		{"/approvals", 200, []string{`data-id="ap-1"`, "Approve", "not today", `data-live="approvals"`}, nil},
		{"/approvals/ap-1", 200, []string{"email needs approval", `href="/decisions/r-mcp"`, "Approve"}, nil},
		{"/approvals/ap-0", 200, []string{"denied", "not today"}, []string{"Approve"}},
		{"/approvals/nope", 404, []string{"no approval nope"}, nil},
		{"/policies", 200, []string{"deny-secrets-in-tool-calls", "pack/10-secrets.yaml:4", "none since start-up", `<td class="num">2</td><td class="num">2</td>`}, nil},
		{"/overview", 200, []string{"<svg", "Decisions per second", "p50 and p99", "Most denied tools", "http_post", "Pending approvals", `href="/approvals/ap-1">send_email`}, []string{"no data in the last hour</text>\n    </svg>\n  <div class=\"legend\"><span class=\"key o-allow\">"}},
		{"/login", 200, []string{"No tokens are configured"}, nil},
		{"/static/console.js", 200, []string{"EventSource"}, nil},
		{"/static/console.css", 200, []string{"--deny"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			w := f.get(t, tt.path, nil, 0)
			body := w.Body.String()
			if w.Code != tt.code {
				t.Fatalf("%d, want %d: %.600s", w.Code, tt.code, body)
			}
			if csp := w.Header().Get("Content-Security-Policy"); csp != CSP {
				t.Errorf("CSP %q", csp)
			}
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in %.3000s", s, body)
				}
			}
			for _, s := range tt.reject {
				if strings.Contains(body, s) {
					t.Errorf("%q should not be there", s)
				}
			}
			if strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				if m := inlineScript.FindString(body); m != "" {
					t.Errorf("inline script: %q", m)
				}
				if styleAttr.MatchString(body) || eventAttr.MatchString(body) {
					t.Errorf("inline style or event handler attribute (the CSP forbids them)")
				}
			}
		})
	}
}

// A tenant's viewer sees its tenant's records and approvals only; a
// read-only viewer gets no approve buttons.
func TestViewers(t *testing.T) {
	f := newFixture(t, 0)
	acme := &warden.Principal{Name: "acme-reader", Tenant: "acme"}
	if w := f.get(t, "/decisions", acme, auth.Read); !strings.Contains(w.Body.String(), "r-acme") || strings.Contains(w.Body.String(), `data-id="r-deny"`) {
		t.Errorf("tenant's decisions: %.2000s", w.Body)
	}
	if w := f.get(t, "/decisions/r-deny", acme, auth.Read); w.Code != 404 {
		t.Errorf("another tenant's decision: %d", w.Code)
	}
	if w := f.get(t, "/approvals/ap-1", acme, auth.Read); w.Code != 404 {
		t.Errorf("another tenant's approval: %d", w.Code)
	}
	viewer := &warden.Principal{Name: "viewer"}
	for _, p := range []string{"/approvals", "/approvals/ap-1"} {
		w := f.get(t, p, viewer, auth.Read)
		if w.Code != 200 || strings.Contains(w.Body.String(), `class="approve"`) || !strings.Contains(w.Body.String(), "approve scope") {
			t.Errorf("%s for a read-only viewer: %d %.3000s", p, w.Code, w.Body)
		}
		if !strings.Contains(w.Body.String(), `data-approve="false"`) {
			t.Errorf("%s: the script is not told the viewer cannot approve", p)
		}
	}
	onlyApprove := f.get(t, "/approvals", &warden.Principal{Name: "approver"}, auth.Approve).Body.String()
	if strings.Contains(onlyApprove, `href="/decisions"`) || !strings.Contains(onlyApprove, `class="approve"`) {
		t.Errorf("an approver without read: links to pages it cannot read, or no buttons")
	}
	approver := &warden.Principal{Name: "ops"}
	if w := f.get(t, "/approvals", approver, auth.Read|auth.Approve); !strings.Contains(w.Body.String(), `class="approve"`) {
		t.Errorf("approver without buttons")
	}
}

// Paging walks every record once, older and back newer, while the newest
// page is live.
func TestPaging(t *testing.T) {
	f := newFixture(t, 2*PageSize+7)
	var seen []string
	ids := regexp.MustCompile(`<tr data-id="([^"]+)"`)
	older := regexp.MustCompile(`href="(/decisions\?after=[^"]+)" rel="next"`)
	newer := regexp.MustCompile(`href="(/decisions\?before=[^"]+)" rel="prev"`)
	path := "/decisions"
	var pages []string
	for path != "" {
		body := f.get(t, path, nil, 0).Body.String()
		pages = append(pages, path)
		for _, m := range ids.FindAllStringSubmatch(body, -1) {
			seen = append(seen, m[1])
		}
		live := strings.Contains(body, `data-live="decisions"`)
		if live != (len(pages) == 1) {
			t.Errorf("page %d live=%v", len(pages), live)
		}
		path = ""
		if m := older.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	want := 4 + 2*PageSize + 7
	if len(seen) != want || len(pages) != 3 {
		t.Fatalf("%d records on %d pages, want %d on 3", len(seen), len(pages), want)
	}
	uniq := map[string]bool{}
	for _, id := range seen {
		uniq[id] = true
	}
	if len(uniq) != want || seen[0] != "x-0106" || seen[want-1] != "r-deny" {
		t.Fatalf("paging repeated or reordered records: first %s last %s, %d unique", seen[0], seen[want-1], len(uniq))
	}
	// Back from the last page: newer gives the middle page again.
	body := f.get(t, pages[2], nil, 0).Body.String()
	m := newer.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no newer link on the last page")
	}
	mid := f.get(t, strings.ReplaceAll(m[1], "&amp;", "&"), nil, 0).Body.String()
	got := ids.FindAllStringSubmatch(mid, -1)
	if len(got) != PageSize || got[0][1] != seen[PageSize] {
		t.Fatalf("newer page: %d rows starting %v, want %d starting %s", len(got), got[0][1], PageSize, seen[PageSize])
	}
	// Filters are kept across pages.
	body = f.get(t, "/decisions?surface=hooks", nil, 0).Body.String()
	if m := older.FindStringSubmatch(body); m == nil || !strings.Contains(m[1], "surface=hooks") {
		t.Fatalf("the older link drops the filter: %v", m)
	}
}

// A search that spends its time budget shows what it found and continues
// from where it stopped.
func TestSearchBudget(t *testing.T) {
	f := newFixture(t, 2*PageSize)
	defer func(b time.Duration) { scanBudget = b }(scanBudget)
	scanBudget = time.Nanosecond // every scan stops after its first record
	body := f.get(t, "/decisions?policy=deny-secrets", nil, 0).Body.String()
	cont := regexp.MustCompile(`href="(/decisions\?after=[^"]+)">search older records →`).FindStringSubmatch(body)
	if !strings.Contains(body, `id="stopped"`) || cont == nil {
		t.Fatalf("no note or link: %.3000s", body)
	}
	// Searching on, a step at a time, reaches the one match.
	path := strings.ReplaceAll(cont[1], "&amp;", "&")
	for range 2*PageSize + 10 {
		body = f.get(t, path, nil, 0).Body.String()
		if strings.Contains(body, `data-id="r-deny"`) {
			return
		}
		m := regexp.MustCompile(`href="(/decisions\?after=[^"]+)">search older records →`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the search ended without the match: %.2000s", body)
		}
		path = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	t.Fatal("the search never reached the match")
}

func TestJSONDiff(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       string // ops joined
	}{
		{"key order is no change", `{"b":1,"a":2}`, `{"a":2,"b":1}`, "    "},
		{"one value", `{"a":1,"b":2}`, `{"a":1,"b":3}`, "  -+ "},
		{"added key", `{"a":1}`, `{"a":1,"z":2}`, " -++ "},
		{"not JSON", `{`, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, note := jsonDiff(json.RawMessage(tt.a), json.RawMessage(tt.b))
			var ops strings.Builder
			for _, l := range d {
				ops.WriteString(l.Op)
			}
			if ops.String() != tt.want {
				t.Errorf("ops %q, want %q (%v %s)", ops.String(), tt.want, d, note)
			}
		})
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/approvals/x": "/approvals/x", "": "/", "//evil.example": "/", "https://evil.example": "/",
		"/\\evil.example": "/", "/a\r\nb": "/", "/decisions?x=1": "/decisions?x=1",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
