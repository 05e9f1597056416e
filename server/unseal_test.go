package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal/sealtest"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/unseal"
)

// The recipient the sealed fixture's steps write to, and what a reader
// without the right sees instead.
const (
	recipient = "bob@external.example"
	redacted  = "[REDACTED:email:"
)

// More tokens for the sealed originals: an unseal token of every tenant,
// one held to acme, approvers held to acme and globex, an admin of acme.
const (
	tokUnseal        = "wdn_unseal-0123456789abcdef"
	tokUnsealOnly    = "wdn_unseal-only-0123456789abcdef"
	tokAcmeUnseal    = "wdn_acme-unseal-0123456789abcdef"
	tokAcmeApprover  = "wdn_acme-approve-0123456789abcdef"
	tokGlobexApprove = "wdn_globex-approve-0123456789abcdef"
	tokAcmeAdmin     = "wdn_acme-admin-0123456789abcdef"
)

// sealedFixture is a server whose trace holds sealed records: one per
// tenant ("", acme, globex) in session s-<tenant>, each a step sending
// mail to recipient, and a pending approval asked by each.
type sealedFixture struct {
	h         http.Handler
	trace     *storetest.Mem
	svc       *unseal.Service
	records   map[string]string // tenant -> record id
	approvals map[string]string // tenant -> approval id
	opts      Options
}

func newSealedFixture(t *testing.T, withAuth bool) *sealedFixture {
	t.Helper()
	sealer := sealtest.NewSealer(t)
	st := storetest.NewMem()
	red := redact.New(make([]byte, redact.KeySize))
	filter := red.RecordFilter(sealer)
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	f := &sealedFixture{trace: st, svc: unseal.New(sealer, st), records: map[string]string{}, approvals: map[string]string{}}
	ctx := context.Background()
	for _, tenant := range []string{"", "acme", "globex"} {
		rec := &audit.Record{ID: "rec-" + tenant, Time: time.Now().UTC(), Tenant: tenant, SessionID: "s-" + tenant,
			Event: "steps/toolCallRequest", Surface: "aos", Tool: "send_email", Decision: "ask", Caller: "agents",
			Reason: "email to " + recipient + " needs approval",
			Input:  json.RawMessage(`{"tool":"send_email","to":"` + recipient + `"}`)}
		if err := filter(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Sealed) == 0 || strings.Contains(string(rec.Input)+rec.Reason, recipient) {
			t.Fatalf("the fixture's record is not redacted and sealed: %s %s", rec.Input, rec.Sealed)
		}
		if err := st.Record(ctx, rec); err != nil {
			t.Fatal(err)
		}
		a := &approval.Approval{ID: approval.NewID(), State: approval.ApprovalPending, Event: rec.Event, Surface: "aos",
			Tool: "send_email", Summary: red.String(`send_email {"to":"` + recipient + `"}`), Reason: rec.Reason,
			Created: time.Now().UTC(), Expires: time.Now().Add(time.Hour).UTC(), Tenant: tenant, Key: "k" + tenant,
			RecordID: rec.ID, SessionID: rec.SessionID, Caller: "agents"}
		if !strings.Contains(a.Summary, redacted) {
			t.Fatalf("summary not redacted: %s", a.Summary)
		}
		if err := st.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		f.records[tenant], f.approvals[tenant] = rec.ID, a.ID
	}
	f.opts = Options{Store: st, Approvals: m, Unseal: f.svc}
	if withAuth {
		c := testAuth(t)
		for _, e := range []struct {
			name, tok, tenant string
			s                 auth.Scope
		}{
			{"unsealer", tokUnseal, "", auth.Read | auth.Unseal},
			{"unseal-only", tokUnsealOnly, "", auth.Unseal},
			{"acme-unsealer", tokAcmeUnseal, "acme", auth.Read | auth.Unseal},
			{"acme-approver", tokAcmeApprover, "acme", auth.Approve},
			{"globex-approver", tokGlobexApprove, "globex", auth.Approve},
			{"acme-admin", tokAcmeAdmin, "acme", auth.Admin},
		} {
			h, err := auth.ParseHash(auth.Hash(e.tok))
			if err != nil {
				t.Fatal(err)
			}
			c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: e.s, Tenant: e.tenant})
		}
		f.opts.Security = Security{Auth: c}
	}
	f.h = New(f.opts)
	return f
}

// unseals are the trace's unseal and forget records, oldest first.
func (f *sealedFixture) unseals(t *testing.T) []audit.Record {
	t.Helper()
	recs, err := audit.Collect(context.Background(), f.trace, audit.Query{Surface: unseal.Surface, Oldest: true}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// shows reports what a body shows of the recipient: "original",
// "redacted", "both" or "neither".
func shows(body string) string {
	o, r := strings.Contains(body, recipient), strings.Contains(body, redacted)
	switch {
	case o && r:
		return "both"
	case o:
		return "original"
	case r:
		return "redacted"
	}
	return "neither"
}

// Who sees the originals of an approval on the approvals API: those who
// may decide it (approve, unseal, admin; anyone without auth); a read
// token sees the redaction; every unseal is recorded; the attacks are
// refused.
func TestApprovalsAPIOriginals(t *testing.T) {
	f := newSealedFixture(t, true)
	none, acme, globex := f.approvals[""], f.approvals["acme"], f.approvals["globex"]
	for _, c := range []struct {
		name, path, token string
		code              int
		want              string // shows(body)
		unseals           int    // unseal records it adds
	}{
		{"approver lists", "/api/approvals", tokApprove, 200, "original", 3},
		{"approver reads one", "/api/approvals/" + none, tokApprove, 200, "original", 1},
		{"approver asks unseal=0", "/api/approvals/" + none + "?unseal=0", tokApprove, 200, "redacted", 0},
		{"unseal token reads one", "/api/approvals/" + acme, tokUnseal, 200, "original", 1},
		{"admin lists", "/api/approvals?state=pending", tokAdmin, 200, "original", 3},
		{"acme approver lists its tenant's", "/api/approvals", tokAcmeApprover, 200, "original", 1},
		{"acme approver reads its own", "/api/approvals/" + acme, tokAcmeApprover, 200, "original", 1},
		{"read token lists", "/api/approvals", tokRead, 200, "redacted", 0},
		{"read token reads one", "/api/approvals/" + none, tokRead, 200, "redacted", 0},
		{"bad unseal", "/api/approvals/" + none + "?unseal=yes", tokApprove, 400, "neither", 0},
		// Attacks: each refused, nothing unsealed.
		{"read token asks unseal=1", "/api/approvals?unseal=1", tokRead, 403, "neither", 0},
		{"read token asks unseal=1 of one", "/api/approvals/" + none + "?unseal=1", tokRead, 403, "neither", 0},
		{"decide token", "/api/approvals/" + none, tokDecide, 403, "neither", 0},
		{"no token", "/api/approvals/" + none, "", 401, "neither", 0},
		{"acme approver on another tenant's", "/api/approvals/" + globex, tokAcmeApprover, 404, "neither", 0},
		{"globex approver on acme's", "/api/approvals/" + acme, tokGlobexApprove, 404, "neither", 0},
		{"acme unsealer on no tenant's", "/api/approvals/" + none, tokAcmeUnseal, 404, "neither", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.unseals(t))
			w := call(f.h, "GET", c.path, c.token, "")
			if w.Code != c.code || shows(w.Body.String()) != c.want {
				t.Fatalf("%d, shows %s: %s; want %d, %s", w.Code, shows(w.Body.String()), w.Body, c.code, c.want)
			}
			if n := len(f.unseals(t)) - before; n != c.unseals {
				t.Errorf("%d unseal records, want %d", n, c.unseals)
			}
		})
	}

	// The one approval: its summary, reason and the input that asked,
	// revealed for the approver, redacted for a reader; the shape is the
	// approval's and "input".
	for _, c := range []struct{ token, want string }{{tokApprove, recipient}, {tokRead, redacted}} {
		w := call(f.h, "GET", "/api/approvals/"+none, c.token, "")
		var got struct {
			approval.Approval
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.Summary, c.want) || !strings.Contains(got.Reason, c.want) || !strings.Contains(string(got.Input), c.want) ||
			got.ID != none || got.RecordID != f.records[""] {
			t.Errorf("%s: %s", c.token, w.Body)
		}
	}
	us := f.unseals(t)
	last := us[len(us)-1]
	if last.Caller != "approver" || last.Decision != "allow" || !strings.Contains(string(last.Input), `"via":"api"`) ||
		!strings.Contains(string(last.Input), `"record":"`+f.records[""]+`"`) || strings.Contains(string(last.Input)+last.Reason, recipient) {
		t.Errorf("the approver's unseal record: %+v %s", last, last.Input)
	}
}

// Without auth the approvals API shows the originals (everything is open,
// loopback only); with sealing off it shows the redaction, and unseal=1
// is 409.
func TestApprovalsAPIOriginalsNoAuthAndOff(t *testing.T) {
	f := newSealedFixture(t, false)
	if w := call(f.h, "GET", "/api/approvals/"+f.approvals["acme"], "", ""); w.Code != 200 || shows(w.Body.String()) != "original" {
		t.Errorf("without auth: %d %s", w.Code, w.Body)
	}
	if w := call(f.h, "GET", "/api/approvals", "", ""); w.Code != 200 || shows(w.Body.String()) != "original" {
		t.Errorf("without auth, the list: %d %s", w.Code, w.Body)
	}
	off := f.opts
	off.Unseal = nil
	h := New(off)
	if w := call(h, "GET", "/api/approvals/"+f.approvals["acme"], "", ""); w.Code != 200 || shows(w.Body.String()) != "redacted" {
		t.Errorf("sealing off: %d %s", w.Code, w.Body)
	}
	if w := call(h, "GET", "/api/approvals?unseal=1", "", ""); w.Code != 409 || !strings.Contains(w.Body.String(), "sealed originals are off") {
		t.Errorf("sealing off, unseal=1: %d %s", w.Code, w.Body)
	}
}

// The runs API shows originals with unseal=1 to the unseal scope only;
// a tenant's unsealer asking for another tenant's record is refused and
// the refusal recorded.
func TestRunsAPIUnseal(t *testing.T) {
	f := newSealedFixture(t, true)
	none, acme, globex := f.records[""], f.records["acme"], f.records["globex"]
	for _, c := range []struct {
		name, path, token string
		code              int
		want              string
		unseals           int
	}{
		{"unsealer pages", "/api/runs?surface=aos&unseal=1", tokUnseal, 200, "original", 3},
		{"unsealer reads one", "/api/runs/" + none + "?unseal=1", tokUnseal, 200, "original", 1},
		{"unsealer, hooks runs", "/api/hooks/runs?unseal=1&session=s-acme", tokUnseal, 200, "original", 1},
		{"unsealer without unseal=1", "/api/runs/" + none, tokUnseal, 200, "redacted", 0},
		{"unseal=0", "/api/runs?unseal=0&surface=aos", tokUnseal, 200, "redacted", 0},
		{"admin reads one", "/api/runs/" + globex + "?unseal=true", tokAdmin, 200, "original", 1},
		{"acme unsealer, its own", "/api/runs/" + acme + "?unseal=1", tokAcmeUnseal, 200, "original", 1},
		{"acme unsealer pages its tenant's", "/api/runs?unseal=1&surface=aos", tokAcmeUnseal, 200, "original", 1},
		{"acme unsealer, another's without unseal", "/api/runs/" + globex, tokAcmeUnseal, 404, "neither", 0},
		{"read token without unseal", "/api/runs/" + none, tokRead, 200, "redacted", 0},
		{"bad unseal", "/api/runs?unseal=yes", tokUnseal, 400, "neither", 0},
		{"bad unseal, one", "/api/runs/" + none + "?unseal=2", tokUnseal, 400, "neither", 0},
		{"repeated unseal", "/api/runs?unseal=1&unseal=1", tokUnseal, 400, "neither", 0},
		{"unknown parameter, one", "/api/runs/" + none + "?unsealed=1", tokUnseal, 400, "neither", 0},
		{"unseal on the stream", "/api/runs/stream?unseal=1", tokUnseal, 400, "neither", 0},
		// Attacks.
		{"read token asks unseal=1", "/api/runs?unseal=1", tokRead, 403, "neither", 0},
		{"read token asks unseal=1 of one", "/api/runs/" + none + "?unseal=1", tokRead, 403, "neither", 0},
		{"read token, hooks runs", "/api/hooks/runs?unseal=1", tokRead, 403, "neither", 0},
		{"approve token", "/api/runs/" + none + "?unseal=1", tokApprove, 403, "neither", 0},
		{"decide token", "/api/runs/" + none + "?unseal=1", tokDecide, 403, "neither", 0},
		{"unseal without read", "/api/runs/" + none + "?unseal=1", tokUnsealOnly, 403, "neither", 0},
		{"no token", "/api/runs/" + none + "?unseal=1", "", 401, "neither", 0},
		{"acme unsealer, another tenant's", "/api/runs/" + globex + "?unseal=1", tokAcmeUnseal, 403, "neither", 1},
		{"acme unsealer, no tenant's", "/api/runs/" + none + "?unseal=1", tokAcmeUnseal, 403, "neither", 1},
		{"unknown id", "/api/runs/nope?unseal=1", tokUnseal, 404, "neither", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.unseals(t))
			w := call(f.h, "GET", c.path, c.token, "")
			if w.Code != c.code || shows(w.Body.String()) != c.want {
				t.Fatalf("%d, shows %s: %s; want %d, %s", w.Code, shows(w.Body.String()), w.Body, c.code, c.want)
			}
			if n := len(f.unseals(t)) - before; n != c.unseals {
				t.Errorf("%d unseal records, want %d", n, c.unseals)
			}
			if c.code == 200 && c.want == "original" && w.Header().Get(UnsealedHeader) == "" {
				t.Errorf("no %s header", UnsealedHeader)
			}
		})
	}
	if w := call(f.h, "GET", "/api/runs?unseal=1", tokRead, ""); !strings.Contains(w.Body.String(), "lacks the unseal scope") {
		t.Errorf("the refusal does not say why: %s", w.Body)
	}
	// The cross-tenant refusal is recorded: who asked, its tenant, deny.
	if w := call(f.h, "GET", "/api/runs/"+globex+"?unseal=1", tokAcmeUnseal, ""); !strings.Contains(w.Body.String(), "another tenant") {
		t.Errorf("cross-tenant: %s", w.Body)
	}
	us := f.unseals(t)
	last := us[len(us)-1]
	if last.Decision != "deny" || last.Caller != "acme-unsealer" || last.Tenant != "acme" ||
		len(last.ReasonCodes) == 0 || last.ReasonCodes[0] != unseal.CodeOtherTenant || !strings.Contains(string(last.Input), globex) {
		t.Errorf("cross-tenant refusal record: %+v %s", last, last.Input)
	}
	// The unseal records are themselves records the runs API lists.
	if w := call(f.h, "GET", "/api/runs?surface=unseal", tokRead, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"event":"unseal"`) ||
		strings.Contains(w.Body.String(), `"surface":"aos"`) {
		t.Errorf("the unseal records on /api/runs: %d %.300s", w.Code, w.Body)
	}
}

// unseal=1 without auth reveals; with sealing off it is 409.
func TestRunsAPIUnsealNoAuthAndOff(t *testing.T) {
	f := newSealedFixture(t, false)
	if w := call(f.h, "GET", "/api/runs/"+f.records["acme"]+"?unseal=1", "", ""); w.Code != 200 || shows(w.Body.String()) != "original" ||
		w.Header().Get(UnsealedHeader) != "1" {
		t.Errorf("without auth: %d %v %s", w.Code, w.Header(), w.Body)
	}
	off := f.opts
	off.Unseal = nil
	h := New(off)
	for _, p := range []string{"/api/runs?unseal=1", "/api/runs/" + f.records["acme"] + "?unseal=1", "/api/hooks/runs?unseal=1"} {
		if w := call(h, "GET", p, "", ""); w.Code != 409 || !strings.Contains(w.Body.String(), "sealed originals are off") {
			t.Errorf("%s with sealing off: %d %s", p, w.Code, w.Body)
		}
	}
	if w := call(h, "GET", "/api/runs/"+f.records["acme"], "", ""); w.Code != 200 || shows(w.Body.String()) != "redacted" {
		t.Errorf("sealing off, without unseal: %d %s", w.Code, w.Body)
	}
}

// A page of revealed records may weigh more than the stored ones: the
// page stops before the record that would not fit, and no unseal is
// recorded for a record it leaves out.
func TestRunsAPIUnsealPageBytes(t *testing.T) {
	f := newSealedFixture(t, false)
	ctx := context.Background()
	long := "bob@" + strings.Repeat("mail.", 40) + "external.example"
	// A record whose revealed form is much larger than its stored form.
	red := redact.New(make([]byte, redact.KeySize))
	for _, id := range []string{"big-1", "big-2"} {
		rec := &audit.Record{ID: id, Time: time.Now().UTC(), SessionID: "s-big", Event: "steps/toolCallRequest", Surface: "aos",
			Decision: "allow", Input: json.RawMessage(`{"to":"` + long + `"}`)}
		if err := red.RecordFilter(f.svc.Sealer())(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Sealed) == 0 || strings.Contains(string(rec.Input), long) {
			t.Fatalf("not sealed: %s", rec.Input)
		}
		if err := f.trace.Record(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	// Room for both stored records, not for both revealed.
	const prefix = `{"runs":[`
	probe := newRecordPage(prefix, 10, 1<<20, runsPageReserve)
	if err := f.trace.Scan(ctx, audit.Query{Session: "s-big"}, probe.add); err != nil || probe.n != 2 {
		t.Fatalf("probe: %d, %v", probe.n, err)
	}
	page := newRecordPage(prefix, 10, int64(probe.buf.Len()+runsPageReserve), runsPageReserve)
	rv := &revealer{svc: f.svc, v: unseal.Viewer{Name: "dana", Via: viaAPI}}
	before := len(f.unseals(t))
	if err := scanPage(ctx, f.trace, audit.Query{Session: "s-big"}, page, prefix, rv); err != nil {
		t.Fatal(err)
	}
	if page.n != 1 || page.full != "bytes" || page.lastID != "big-2" || !strings.Contains(page.buf.String(), long) {
		t.Fatalf("page: %d records, full %q, last %q", page.n, page.full, page.lastID)
	}
	if n := len(f.unseals(t)) - before; n != 1 || rv.count.values != 1 {
		t.Fatalf("%d unseal records (%d values) for a page showing 1 record", n, rv.count.values)
	}
}

// POST /api/sessions/{id}/forget erases a session's originals (admin
// only), records the erasure, and a tenant's admin forgets its own
// tenant's sessions only.
func TestForgetAPI(t *testing.T) {
	f := newSealedFixture(t, true)
	post := func(path, token, ct, body string) (int, string) {
		w := callCT(f.h, "POST", path, token, ct, body)
		return w.Code, w.Body.String()
	}
	const js = "application/json"
	for _, c := range []struct {
		name, path, token, ct, body string
		code                        int
	}{
		{"read token", "/api/sessions/s-/forget", tokRead, js, "", 403},
		{"approve token", "/api/sessions/s-/forget", tokApprove, js, "", 403},
		{"unseal token", "/api/sessions/s-/forget", tokUnseal, js, "", 403},
		{"decide token", "/api/sessions/s-/forget", tokDecide, js, "", 403},
		{"no token", "/api/sessions/s-/forget", "", js, "", 401},
		{"acme admin, another tenant", "/api/sessions/s-globex/forget", tokAcmeAdmin, js, `{"tenant":"globex"}`, 403},
		{"acme admin, no tenant", "/api/sessions/s-/forget", tokAcmeAdmin, js, `{"tenant":""}`, 403},
		{"not JSON", "/api/sessions/s-/forget", tokAdmin, "text/plain", "", 415},
		{"unknown member", "/api/sessions/s-/forget", tokAdmin, js, `{"tenant":"","session":"x"}`, 400},
		{"not an object", "/api/sessions/s-/forget", tokAdmin, js, `[]`, 400},
		{"GET", "/api/sessions/s-/forget", tokAdmin, "", "", 405},
	} {
		method := "POST"
		if c.name == "GET" {
			method = "GET"
		}
		if w := callCT(f.h, method, c.path, c.token, c.ct, c.body); w.Code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.code)
		}
	}
	if n := len(f.unseals(t)); n != 0 {
		t.Fatalf("the refused requests recorded %d erasures", n)
	}

	// The admin forgets the session without a tenant; the acme admin its
	// tenant's (no body needed).
	code, body := post("/api/sessions/s-/forget", tokAdmin, js, "")
	if code != 200 || body != `{"session":"s-","tenant":"","keys_destroyed":1}`+"\n" {
		t.Fatalf("forget: %d %s", code, body)
	}
	code, body = post("/api/sessions/s-acme/forget", tokAcmeAdmin, js, `{"tenant":"acme"}`)
	if code != 200 || !strings.Contains(body, `"tenant":"acme","keys_destroyed":1`) {
		t.Fatalf("acme's forget: %d %s", code, body)
	}
	us := f.unseals(t)
	if len(us) != 2 || us[0].Event != unseal.EventForget || us[0].Caller != "root" || us[0].SessionID != "s-" ||
		us[1].Tenant != "acme" || us[1].Caller != "acme-admin" || !strings.Contains(string(us[0].Input), `"keys_destroyed":1`) {
		t.Fatalf("erasure records: %+v", us)
	}
	// Gone: unseal=1 shows the redaction and says the values were erased;
	// globex's session is untouched.
	w := call(f.h, "GET", "/api/runs/"+f.records[""]+"?unseal=1", tokUnseal, "")
	if w.Code != 200 || shows(w.Body.String()) != "redacted" || w.Header().Get(UnsealErasedHeader) != "1" || w.Header().Get(UnsealedHeader) != "0" {
		t.Errorf("after forget: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := call(f.h, "GET", "/api/approvals/"+f.approvals["acme"], tokApprove, ""); shows(w.Body.String()) != "redacted" {
		t.Errorf("acme's approval after forget: %s", w.Body)
	}
	if w := call(f.h, "GET", "/api/runs/"+f.records["globex"]+"?unseal=1", tokUnseal, ""); shows(w.Body.String()) != "original" {
		t.Errorf("globex's record after the others' forget: %s", w.Body)
	}
	// Again: nothing left to destroy.
	if code, body := post("/api/sessions/s-/forget", tokAdmin, js, `{}`); code != 200 || !strings.Contains(body, `"keys_destroyed":0`) {
		t.Errorf("forget again: %d %s", code, body)
	}

	off := f.opts
	off.Unseal = nil
	if w := callCT(New(off), "POST", "/api/sessions/s-/forget", tokAdmin, js, ""); w.Code != 409 || !strings.Contains(w.Body.String(), "sealed originals are off") {
		t.Errorf("sealing off: %d %s", w.Code, w.Body)
	}
}

// callCT is call with a Content-Type of the caller's choosing ("" for
// none).
func callCT(h http.Handler, method, path, token, ct, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://warden.test:8787"+path, strings.NewReader(body))
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
