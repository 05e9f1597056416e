package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal/sealtest"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/unseal"
)

// The originals the sealed fixture's records hold: no page shows one to a
// viewer who may not see it.
const (
	bob   = "bob@external.example"    // r-ask's recipient (approval ap-mail, pending)
	card  = "4111 1111 1111 1111"     // r-card's card number (a modify)
	carol = "carol@acme.example"      // r-acme's recipient (tenant acme, ap-acme)
	dave  = "dave@decided.example"    // r-old's recipient (ap-old, approved)
	erin  = "erin@forgotten.example"  // r-gone's recipient (its session forgotten)
	frank = "frank@unrelated.example" // r-frank's, a record that names no approval
)

var originals = []string{bob, card, carol, dave, erin, frank}

// sealedFixture is a console over a trace whose records are redacted with
// their originals sealed, as the Guardian stores them, and an unseal
// Service.
type sealedFixture struct {
	st  *storetest.Mem
	svc *unseal.Service
	c   *Console
}

func newSealedFixture(t *testing.T) *sealedFixture {
	t.Helper()
	ctx := context.Background()
	sealer := sealtest.NewSealer(t)
	st := storetest.NewMem()
	rd := redact.New(make([]byte, redact.KeySize))
	filter := rd.RecordFilter(sealer)
	f := &sealedFixture{st: st, svc: unseal.New(sealer, st)}
	at := time.Now().UTC().Add(-time.Minute)
	add := func(r *audit.Record) {
		t.Helper()
		if err := filter(ctx, r); err != nil {
			t.Fatal(err)
		}
		if len(r.Sealed) == 0 && r.ID != "r-plain" {
			t.Fatalf("%s: nothing sealed: %s", r.ID, r.Input)
		}
		if err := st.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	mail := func(id, tenant, session, approvalID, to string) *audit.Record {
		r := rec(id, "steps/toolCallRequest", "aos", "ask", "ask-email", session, at,
			`{"toolCallRequest":{"toolId":"send_email","inputs":[{"name":"to","value":"`+to+`"}]}}`)
		r.Tenant, r.ApprovalID, r.Tool = tenant, approvalID, "send_email"
		r.Reason = "mail to " + to + " needs approval"
		r.Results = []warden.Result{{Guardian: "policy", PolicyID: "ask-email", Decision: "ask", Mode: "enforce", Reason: "recipient " + to}}
		return r
	}
	add(mail("r-ask", "", "s-mail", "ap-mail", bob))
	mod := rec("r-card", "steps/message", "aos", "modify", "redact-cards", "s-card", at, `{"message":{"role":"agent","text":"card `+card+`"}}`)
	mod.Output = json.RawMessage(`{"message":{"role":"agent","text":"card [REDACTED:credit_card]"}}`)
	add(mod)
	add(mail("r-acme", "acme", "s-acme", "ap-acme", carol))
	add(mail("r-old", "", "s-old", "ap-old", dave))
	add(mail("r-gone", "", "s-gone", "", erin))
	add(mail("r-frank", "", "s-mail", "", frank))
	add(rec("r-plain", "steps/message", "aos", "allow", "", "s-mail", at, `{"message":{"text":"hello"}}`))
	summary := func(to string) string { return rd.String(`send_email {"to":"` + to + `"}`) }
	for _, a := range []approval.Approval{
		{ID: "ap-mail", RecordID: "r-ask", SessionID: "s-mail", Summary: summary(bob), Reason: rd.String("mail to " + bob + " needs approval")},
		{ID: "ap-acme", RecordID: "r-acme", SessionID: "s-acme", Tenant: "acme", Summary: summary(carol), Reason: "sending email needs approval"},
		{ID: "ap-old", RecordID: "r-old", SessionID: "s-old", Summary: summary(dave), Reason: "sending email needs approval"},
		// Its record holds sealed values, its texts no mark: nothing to
		// open, no unseal recorded.
		{ID: "ap-nomark", RecordID: "r-frank", SessionID: "s-mail", Summary: "send_email (no arguments)", Reason: "sending email needs approval"},
	} {
		a.State, a.Event, a.Surface, a.Tool, a.PolicyID, a.Key = approval.ApprovalPending, "steps/toolCallRequest", "aos", "send_email", "ask-email", a.ID
		a.Created, a.Expires = at, at.Add(time.Hour)
		if strings.Contains(a.Summary, "@") || a.ID != "ap-nomark" && !strings.Contains(a.Summary, "[REDACTED:email:") {
			t.Fatalf("%s: summary not redacted: %s", a.ID, a.Summary)
		}
		if err := st.CreateApproval(ctx, &a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DecideApproval(ctx, "ap-old", approval.ApprovalApproved, "ops", "fine", at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Forget(ctx, unseal.Viewer{Name: "privacy-officer", Via: "cli", From: "cli"}, "", "s-gone"); err != nil {
		t.Fatal(err)
	}
	f.c = New(Options{Store: st, Approvals: memApprovals{st}, Unseal: f.svc, RunsStream: "/api/runs/stream"})
	return f
}

// get requests path as p with scopes (nil p: no auth).
func (f *sealedFixture) get(t *testing.T, path string, p *warden.Principal, scopes auth.Scope) (int, string) {
	t.Helper()
	r := httptest.NewRequest("GET", "http://warden.test"+path, nil)
	if p != nil {
		r = r.WithContext(auth.WithScopes(warden.WithPrincipal(r.Context(), *p), scopes))
	}
	w := httptest.NewRecorder()
	f.c.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// unseals returns the trace's unseal records, oldest first (forgets too).
func (f *sealedFixture) unseals(t *testing.T) []audit.Record {
	t.Helper()
	recs, err := audit.Collect(context.Background(), f.st, audit.Query{Surface: unseal.Surface, Event: unseal.EventUnseal, Oldest: true}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Who sees which originals where: each case names the originals a page
// must show to a viewer and those it must not, and how many unseals the
// view records.
func TestOriginalsShown(t *testing.T) {
	var (
		noAuth   *warden.Principal
		auditor  = &warden.Principal{Name: "auditor"}
		ops      = &warden.Principal{Name: "ops"}
		approver = &warden.Principal{Name: "approver"}
		viewer   = &warden.Principal{Name: "viewer"}
		admin    = &warden.Principal{Name: "root"}
		acme     = &warden.Principal{Name: "acme-auditor", Tenant: "acme"}
	)
	const shownNote = "Originals shown — this view is recorded."
	tests := []struct {
		name    string
		p       *warden.Principal
		scopes  auth.Scope
		path    string
		code    int
		show    []string // originals (and notes) the page shows
		hide    []string // originals the page must not show
		unseals int      // unseal records the view adds
	}{
		// The unseal scope: the decision page (input, reason, results)
		// and its diff, the original on the - side and the modified value
		// on the +.
		{"unseal: decision", auditor, auth.Read | auth.Unseal, "/decisions/r-ask", 200,
			[]string{`&#34;value&#34;: &#34;` + bob + `&#34;`, `<p class="lead">mail to ` + bob + ` needs approval</p>`, "recipient " + bob, shownNote, "Input, with its originals"}, nil, 1},
		{"unseal: diff", auditor, auth.Read | auth.Unseal, "/decisions/r-card", 200,
			[]string{`<span class="del">-     &#34;text&#34;: &#34;card ` + card + `&#34;`, `<span class="ins">&#43;     &#34;text&#34;: &#34;card [REDACTED:credit_card]&#34;`, shownNote},
			[]string{"[REDACTED:credit_card:"}, 1},
		{"unseal: a record nothing names", auditor, auth.Read | auth.Unseal, "/decisions/r-frank", 200, []string{frank}, nil, 1},
		{"unseal: an approval page", auditor, auth.Read | auth.Unseal, "/approvals/ap-mail", 200, []string{`send_email {&#34;to&#34;:&#34;` + bob + `&#34;}`, shownNote}, nil, 1},
		{"unseal: a decided approval", auditor, auth.Read | auth.Unseal, "/approvals/ap-old", 200, []string{dave}, nil, 1},
		{"unseal: a record without sealed values records nothing", auditor, auth.Read | auth.Unseal, "/decisions/r-plain", 200, []string{"hello"}, []string{shownNote}, 0},
		{"unseal: erased values", auditor, auth.Read | auth.Unseal, "/decisions/r-gone", 200, []string{`<span class="erased">1 value erased</span>`, "[REDACTED:email:"}, []string{erin, shownNote}, 0},
		{"admin implies unseal", admin, auth.Admin, "/decisions/r-card", 200, []string{card}, nil, 1},
		{"no auth: everyone", noAuth, 0, "/decisions/r-card", 200, []string{card, shownNote}, nil, 1},
		{"no auth: the queue", noAuth, 0, "/approvals", 200, []string{bob, carol}, []string{dave}, 2},

		// The approve scope: the approvals it may decide (pending), on the
		// queue and their pages, and the record such an approval names.
		{"approve: the approval page", ops, auth.Read | auth.Approve, "/approvals/ap-mail", 200,
			[]string{`<p class="lead" id="summary">send_email {&#34;to&#34;:&#34;` + bob + `&#34;}</p>`, "mail to " + bob + " needs approval", shownNote}, nil, 1},
		{"approve: the queue", ops, auth.Read | auth.Approve, "/approvals", 200, []string{bob, carol, shownNote}, nil, 2},
		{"approve without read: the queue", approver, auth.Approve, "/approvals", 200, []string{bob}, nil, 2},
		{"approve: the asking record", ops, auth.Read | auth.Approve, "/decisions/r-ask", 200, []string{bob, shownNote}, nil, 1},
		{"approve: not a record no approval names", ops, auth.Read | auth.Approve, "/decisions/r-card", 200, []string{"[REDACTED:credit_card:"}, []string{card, shownNote}, 0},
		{"approve: a decided approval", ops, auth.Read | auth.Approve, "/approvals/ap-old", 200, []string{dave, shownNote}, nil, 1},
		{"approve: a decided approval's record", ops, auth.Read | auth.Approve, "/decisions/r-old", 200, []string{dave, shownNote}, nil, 1},
		{"approve: an approval without a mark records nothing", ops, auth.Read | auth.Approve, "/approvals/ap-nomark", 200, []string{"send_email (no arguments)"}, []string{frank, shownNote}, 0},
		{"approve: not another record of the session", ops, auth.Read | auth.Approve, "/decisions/r-frank", 200, nil, []string{frank}, 0},

		// A tenant's viewer: its tenant's records only.
		{"tenant: its own", acme, auth.Read | auth.Unseal, "/decisions/r-acme", 200, []string{carol}, nil, 1},
		{"tenant: another's", acme, auth.Read | auth.Unseal, "/decisions/r-ask", 404, nil, []string{bob}, 0},
		{"tenant: another's approval", acme, auth.Read | auth.Unseal, "/approvals/ap-mail", 404, nil, []string{bob}, 0},
		{"tenant: the queue", acme, auth.Read | auth.Unseal, "/approvals", 200, []string{carol}, []string{bob}, 1},

		// Read: the redacted form, as stored.
		{"read: decision", viewer, auth.Read, "/decisions/r-ask", 200, []string{"[REDACTED:email:", "Input, as stored"}, []string{bob, shownNote}, 0},
		{"read: diff", viewer, auth.Read, "/decisions/r-card", 200, []string{`-     &#34;text&#34;: &#34;card [REDACTED:credit_card:`}, []string{card}, 0},
		{"read: approval", viewer, auth.Read, "/approvals/ap-mail", 200, []string{"[REDACTED:email:"}, []string{bob, shownNote}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSealedFixture(t)
			code, body := f.get(t, tt.path, tt.p, tt.scopes)
			if code != tt.code {
				t.Fatalf("%d, want %d: %.2000s", code, tt.code, body)
			}
			for _, s := range tt.show {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in %.6000s", s, body)
				}
			}
			for _, s := range tt.hide {
				if strings.Contains(body, s) {
					t.Errorf("%q shown", s)
				}
			}
			us := f.unseals(t)
			if len(us) != tt.unseals {
				t.Fatalf("%d unseals recorded, want %d: %+v", len(us), tt.unseals, us)
			}
			for _, u := range us {
				var in struct{ Via, From string }
				_ = json.Unmarshal(u.Input, &in)
				name := ""
				if tt.p != nil {
					name = tt.p.Name
				}
				if u.Caller != name || in.Via != "console" || in.From != "192.0.2.1:1234" {
					t.Errorf("unseal record: caller %q via %q from %q, want %q via console from the request's address", u.Caller, in.Via, in.From, name)
				}
			}
		})
	}
}

// A read caller gets no original in any page's HTML, and unseals nothing.
func TestReadSeesNoOriginal(t *testing.T) {
	f := newSealedFixture(t)
	// Views by others first: their unseal records are listed to the
	// reader too, and must not carry what they saw.
	for _, v := range []struct {
		p      *warden.Principal
		scopes auth.Scope
		path   string
	}{
		{&warden.Principal{Name: "auditor"}, auth.Read | auth.Unseal, "/decisions/r-card"},
		{&warden.Principal{Name: "ops"}, auth.Read | auth.Approve, "/approvals"},
		{nil, 0, "/decisions/r-ask"},
	} {
		if code, _ := f.get(t, v.path, v.p, v.scopes); code != 200 {
			t.Fatalf("%s: %d", v.path, code)
		}
	}
	before := len(f.unseals(t))
	viewer := &warden.Principal{Name: "viewer"}
	paths := []string{"/", "/decisions", "/decisions?surface=unseal", "/decisions?q=REDACTED", "/approvals", "/overview"}
	for _, id := range []string{"r-ask", "r-card", "r-acme", "r-old", "r-gone", "r-frank", "r-plain"} {
		paths = append(paths, "/decisions/"+id)
	}
	for _, s := range []string{"s-mail", "s-card", "s-acme", "s-old", "s-gone"} {
		paths = append(paths, "/sessions/"+s)
	}
	for _, a := range []string{"ap-mail", "ap-acme", "ap-old", "ap-nomark"} {
		paths = append(paths, "/approvals/"+a)
	}
	// Every unseal record's own page too.
	for _, u := range f.unseals(t) {
		paths = append(paths, "/decisions/"+u.ID)
	}
	for _, p := range paths {
		code, body := f.get(t, p, viewer, auth.Read)
		if code != 200 {
			t.Errorf("%s: %d: %.500s", p, code, body)
		}
		for _, o := range originals {
			if strings.Contains(body, o) {
				t.Errorf("%s shows the original %q to a read caller", p, o)
			}
		}
		if strings.Contains(body, `id="originals"`) || !strings.Contains(body, `data-originals="false"`) {
			t.Errorf("%s: the originals note for a read caller, or its script would ask for them", p)
		}
	}
	if n := len(f.unseals(t)); n != before {
		t.Errorf("a read caller's views recorded %d unseals", n-before)
	}
}

// The unseals are listed (who, which record linked, when, from where,
// via), a tenant's viewer sees its tenant's only, and they stay out of the
// way on the other pages.
func TestUnsealsListed(t *testing.T) {
	f := newSealedFixture(t)
	for _, v := range []struct {
		p    *warden.Principal
		s    auth.Scope
		path string
		code int
	}{
		{&warden.Principal{Name: "auditor"}, auth.Read | auth.Unseal, "/decisions/r-card", 200},
		{&warden.Principal{Name: "ops"}, auth.Read | auth.Approve, "/approvals/ap-mail", 200},
		{&warden.Principal{Name: "acme-auditor", Tenant: "acme"}, auth.Read | auth.Unseal, "/decisions/r-acme", 200},
	} {
		if code, _ := f.get(t, v.path, v.p, v.s); code != v.code {
			t.Fatalf("%s: %d", v.path, code)
		}
	}
	reader := &warden.Principal{Name: "viewer"}
	_, body := f.get(t, "/decisions?surface=unseal", reader, auth.Read)
	for _, s := range []string{
		"<h1>Unseals</h1>", `href="/decisions?surface=unseal" class="on"`, `<table class="runs" id="unseals">`,
		`<td class="f-by">auditor</td>`, `<td class="f-by">ops</td>`, `<td class="f-by">acme-auditor</td>`, `<td class="f-by">privacy-officer</td>`,
		`href="/decisions/r-card"`, `href="/decisions/r-ask"`, `href="/decisions/r-acme"`, `href="/sessions/s-gone"`,
		`<td class="f-from">192.0.2.1:1234</td>`, `<td class="f-via">console</td>`, `<td class="f-via">cli</td>`, "1 key",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("unseals list: no %q in %.5000s", s, body)
		}
	}
	if strings.Contains(body, `data-live="decisions"`) || strings.Contains(body, `id="runs"`) {
		t.Error("the unseals list is drawn as live decisions")
	}
	_, acme := f.get(t, "/decisions?surface=unseal", &warden.Principal{Name: "acme-reader", Tenant: "acme"}, auth.Read)
	if !strings.Contains(acme, `href="/decisions/r-acme"`) || strings.Contains(acme, "r-card") || strings.Contains(acme, "r-ask") || strings.Contains(acme, "privacy-officer") {
		t.Errorf("a tenant's unseals list shows another tenant's: %.5000s", acme)
	}
	// The script of an approver's queue asks for the originals of the
	// approvals that arrive live; with none shown yet, its note waits.
	_, q := f.get(t, "/approvals", &warden.Principal{Name: "globex-ops", Tenant: "globex"}, auth.Approve)
	if !strings.Contains(q, `data-originals="true"`) || !strings.Contains(q, `id="originals-live" hidden`) {
		t.Errorf("an approver's empty queue: %.3000s", q)
	}
	// Nav: a reader gets the link; an approver without read does not.
	if _, b := f.get(t, "/approvals", &warden.Principal{Name: "approver"}, auth.Approve); strings.Contains(b, "surface=unseal") {
		t.Error("an approver without read is linked to the unseals")
	}

	// The session timeline shows an unseal as one, not as a decision.
	_, tl := f.get(t, "/sessions/s-mail", reader, auth.Read)
	if !strings.Contains(tl, `<li class="step unseal">`) || !strings.Contains(tl, "saw 1 original of") || !strings.Contains(tl, `<a href="/decisions/r-ask">r-ask</a>`) {
		t.Errorf("timeline: no unseal step: %.6000s", tl)
	}
	// The unseal record's own page links the record unsealed.
	u := f.unseals(t)[0]
	if _, p := f.get(t, "/decisions/"+u.ID, reader, auth.Read); !strings.Contains(p, `<dt>unsealed record</dt><dd><a href="/decisions/r-card">r-card</a> · 1 value</dd>`) {
		t.Errorf("an unseal's page: %.5000s", p)
	}
	// The other pages still answer.
	for _, p := range []string{"/", "/decisions", "/overview", "/sessions/s-gone", "/decisions?surface=aos"} {
		if code, b := f.get(t, p, reader, auth.Read); code != 200 {
			t.Errorf("%s: %d %.500s", p, code, b)
		}
	}
}

// An unseal that cannot be recorded shows nothing: the page is the
// redacted one, with a note why.
func TestOriginalsNotShownUnlessRecorded(t *testing.T) {
	f := newSealedFixture(t)
	f.st.Err = errors.New("disk full")
	code, body := f.get(t, "/decisions/r-card", &warden.Principal{Name: "auditor"}, auth.Read|auth.Unseal)
	if code != 200 || strings.Contains(body, card) || !strings.Contains(body, "Originals not shown") {
		t.Fatalf("%d, the original shown or no note: %.4000s", code, body)
	}
	_, body = f.get(t, "/approvals/ap-mail", &warden.Principal{Name: "ops"}, auth.Read|auth.Approve)
	if strings.Contains(body, bob) || !strings.Contains(body, "Originals not shown") {
		t.Fatalf("approval: the original shown or no note: %.4000s", body)
	}
}

// Without an unseal Service (sealing off), every page shows what is
// stored, to everyone.
func TestOriginalsOff(t *testing.T) {
	f := newSealedFixture(t)
	f.c = New(Options{Store: f.st, Approvals: memApprovals{f.st}})
	for _, p := range []string{"/decisions/r-card", "/approvals/ap-mail", "/approvals"} {
		_, body := f.get(t, p, nil, 0)
		if !strings.Contains(body, `data-originals="false"`) {
			t.Errorf("%s: the script would ask for originals", p)
		}
		for _, o := range originals {
			if strings.Contains(body, o) {
				t.Errorf("%s shows %q without a Service", p, o)
			}
		}
	}
	if n := len(f.unseals(t)); n != 0 {
		t.Errorf("%d unseals without a Service", n)
	}
}
