package server

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/auth"
)

// Every JSON body the server's own handlers read (the approvals API's
// decision, the console's sign-in) is decoded strictly (jsonstrict.Decode):
// keys that differ only in case, duplicate keys, a key that names a field
// only in another case, invalid UTF-8 and lone surrogates are a 400, and
// nothing is decided or signed in.
func TestStrictBodies(t *testing.T) {
	h, m, ids := approvalsServer(t)
	id := ids[1]
	for _, body := range []string{
		`{"decision":"deny","Decision":"approve"}`,
		`{"Decision":"approve","decision":"deny"}`,
		`{"decision":"approve","DECISION":"deny"}`,
		`{"decision":"deny","decision":"approve"}`,
		`{"Decision":"approve"}`,
		`{"decision":"approve","Reason":"x"}`,
		`{"decision":"approve","reason":"\ud800"}`,
		"{\"decision\":\"approve\",\"reason\":\"\xff\"}",
		`{"decision":"approve"} {"decision":"deny"}`,
		`{"decision":"approve","reason":"` + strings.Repeat("a", maxApprovalBody) + `"}`,
	} {
		w := call(h, "POST", "/api/approvals/"+id, tokApprove, body)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"error"`) {
			t.Errorf("%.80s: %d %s, want 400", body, w.Code, w.Body)
		}
	}
	a, err := m.Get(context.Background(), id, "")
	if err != nil || a.State != approval.ApprovalPending {
		t.Fatalf("the approval is %v (%v), want still pending", a, err)
	}
	w := call(h, "POST", "/api/approvals/"+id, tokApprove, `{"decision":"deny","reason":"exact keys"}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"state":"denied"`) {
		t.Fatalf("exact keys: %d %s", w.Code, w.Body)
	}

	// The sign-in body: a bad token and, in another case, a good one.
	cfg := testAuth(t)
	hs, _, _ := sessionServer(t, cfg, bytes.Repeat([]byte{5}, auth.SessionKeySize))
	const self = "http://warden.test:8787"
	for _, body := range []string{
		`{"token":"nope","Token":"` + tokRead + `"}`,
		`{"Token":"` + tokRead + `"}`,
		`{"token":"` + tokRead + `","token":"nope"}`,
	} {
		w := cookieReq(hs, "POST", "/api/session", self, "", body)
		if w.Code != http.StatusBadRequest || w.Header().Get("Set-Cookie") != "" {
			t.Errorf("%s: %d %s (cookie %q), want 400 and no cookie", body, w.Code, w.Body, w.Header().Get("Set-Cookie"))
		}
		if strings.Contains(w.Body.String(), tokRead) {
			t.Errorf("%s: the answer repeats the token: %s", body, w.Body)
		}
	}
	if w := cookieReq(hs, "POST", "/api/session", self, "", `{"token":"`+tokRead+`"}`); w.Code != 200 {
		t.Fatalf("exact keys: %d %s", w.Code, w.Body)
	}
}
