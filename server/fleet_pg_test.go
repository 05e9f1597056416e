package server

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
)

// TestFleetApprovalsAPI: two replicas (each its server, approval manager
// and PostgreSQL store, on one database). Approvers POST a decision of
// one approval to both at once: one 200, one 409, whichever replica wins;
// and a decision on either is visible on both.
func TestFleetApprovalsAPI(t *testing.T) {
	url := pgtest.SchemaURL(t)
	var hs [2]http.Handler
	var sts [2]*postgres.Store
	for i := range hs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := postgres.Open(ctx, url, postgres.Options{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		m := approval.New(approval.Options{Store: st, Trace: st})
		t.Cleanup(m.Close)
		sts[i] = st
		hs[i] = New(Options{Store: st, Approvals: m, Security: Security{Auth: testAuth(t)}})
	}
	approve := `{"decision":"approve","reason":"ok"}`
	deny := `{"decision":"deny","reason":"no"}`
	for round := range 20 {
		a := &approval.Approval{ID: approval.NewID(), Event: "tool.pre_call", Surface: "hooks", Tool: "pay",
			Created: time.Now().UTC(), Expires: time.Now().Add(time.Hour).UTC()}
		if err := sts[round%2].CreateApproval(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		var codes [2]int
		var wg sync.WaitGroup
		for i, body := range []string{approve, deny} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = call(hs[i], "POST", "/api/approvals/"+a.ID, tokApprove, body).Code
			}()
		}
		wg.Wait()
		if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
			t.Fatalf("round %d: the replicas answered %v, want one 200 and one 409", round, codes)
		}
		for i := range hs {
			if w := call(hs[i], "POST", "/api/approvals/"+a.ID, tokApprove, approve); w.Code != 409 {
				t.Fatalf("round %d: deciding again on replica %d: %d, want 409", round, i, w.Code)
			}
		}
	}
}
