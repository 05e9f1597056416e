package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/storetest"
)

// approvalsServer serves the approvals API over a Mem store holding one
// pending approval for tenant acme and one for no tenant.
func approvalsServer(t *testing.T) (http.Handler, *approval.Manager, [2]string) {
	t.Helper()
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	c := testAuth(t)
	h, err := auth.ParseHash(auth.Hash("wdn_acme-approver-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	c.Tokens = append(c.Tokens, auth.Token{Name: "acme-approver", SHA256: h, Scopes: auth.Approve, Tenant: "acme"})
	var ids [2]string
	for i, tenant := range []string{"acme", ""} {
		a := &approval.Approval{ID: approval.NewID(), State: approval.ApprovalPending, Event: "tool.pre_call", Surface: "hooks",
			Tool: "pay", Created: time.Now().UTC(), Expires: time.Now().Add(time.Hour).UTC(), Tenant: tenant, Key: "k" + tenant}
		if err := st.CreateApproval(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	return New(Options{Store: st, Approvals: m, Security: Security{Auth: c}}), m, ids
}

func call(h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://warden.test:8787"+path, strings.NewReader(body))
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Who may list, read and decide approvals; 409 on a second decision; a
// tenant's approver sees and decides only its tenant's (issue 8 scopes,
// issue 9 API).
func TestApprovalsAPIScopes(t *testing.T) {
	h, _, ids := approvalsServer(t)
	acme, other := ids[0], ids[1]
	approve := `{"decision":"approve","reason":"ok"}`
	for _, c := range []struct {
		name, method, path, token, body string
		want                            int
	}{
		{"no token lists", "GET", "/api/approvals", "", "", 401},
		{"decide token lists", "GET", "/api/approvals", tokDecide, "", 403},
		{"read token lists", "GET", "/api/approvals", tokRead, "", 200},
		{"approve token lists", "GET", "/api/approvals", tokApprove, "", 200},
		{"read token approves", "POST", "/api/approvals/" + other, tokRead, approve, 403},
		{"decide token approves", "POST", "/api/approvals/" + other, tokDecide, approve, 403},
		{"acme approver reads another tenant's", "GET", "/api/approvals/" + other, "wdn_acme-approver-0123456789", "", 404},
		{"acme approver decides another tenant's", "POST", "/api/approvals/" + other, "wdn_acme-approver-0123456789", approve, 404},
		{"bad decision", "POST", "/api/approvals/" + other, tokApprove, `{"decision":"maybe"}`, 400},
		{"unknown field", "POST", "/api/approvals/" + other, tokApprove, `{"decision":"approve","by":"me"}`, 400},
		{"unknown id", "POST", "/api/approvals/nope", tokApprove, approve, 404},
		{"bad state", "GET", "/api/approvals?state=maybe", tokRead, "", 400},
		{"approver approves", "POST", "/api/approvals/" + other, tokApprove, approve, 200},
		{"approver approves twice", "POST", "/api/approvals/" + other, tokApprove, `{"decision":"deny"}`, 409},
		{"acme approver decides its own", "POST", "/api/approvals/" + acme, "wdn_acme-approver-0123456789", `{"decision":"deny"}`, 200},
	} {
		w := call(h, c.method, c.path, c.token, c.body)
		if w.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.want)
		}
	}
	var page struct {
		Approvals []approval.Approval `json:"approvals"`
	}
	w := call(h, "GET", "/api/approvals?state=approved", tokRead, "")
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Approvals) != 1 || page.Approvals[0].ID != other ||
		page.Approvals[0].DecidedBy != "approver" || page.Approvals[0].DecidedReason != "ok" {
		t.Fatalf("approved list: %s", w.Body)
	}
	w = call(h, "GET", "/api/approvals?state=all", tokRead, "")
	if w.Code != 400 {
		t.Errorf("state=all: %d", w.Code)
	}
	w = call(h, "GET", "/api/approvals", "wdn_acme-approver-0123456789", "")
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Approvals) != 1 || page.Approvals[0].Tenant != "acme" {
		t.Fatalf("the acme approver's list: %s", w.Body)
	}
}

// The stream sends the pending approvals, then each change.
func TestApprovalsStream(t *testing.T) {
	h, m, ids := approvalsServer(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/approvals/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tokRead)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	next := func() approval.Approval {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var a approval.Approval
				if err := json.Unmarshal([]byte(d), &a); err != nil {
					t.Fatal(err)
				}
				return a
			}
		}
	}
	seen := map[string]bool{next().ID: true, next().ID: true}
	if !seen[ids[0]] || !seen[ids[1]] {
		t.Fatalf("the pending approvals first: %v", seen)
	}
	if _, err := m.Resolve(context.Background(), ids[1], true, warden.Principal{Name: "ops"}, ""); err != nil {
		t.Fatal(err)
	}
	if a := next(); a.ID != ids[1] || a.State != approval.ApprovalApproved {
		t.Fatalf("change: %+v", a)
	}
}
