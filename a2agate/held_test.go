package a2agate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

type heldCore struct {
	d *pipeline.Pipeline
	m *approval.Manager
}

func (c heldCore) Decide(ctx context.Context, ev *warden.Event) (warden.Outcome, error) {
	return c.d.Decide(ctx, ev)
}

func (c heldCore) Await(ctx context.Context, out warden.Outcome) warden.Outcome {
	return c.m.Await(ctx, out)
}

// An A2A request a policy asks about is held until it is decided: approved
// it reaches the agent and the client gets its answer; denied it never
// does (issue 9: surfaces that can wait hold the step).
func TestHeldRequest(t *testing.T) {
	askWire := warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
		if ev.Direction == warden.Outbound && strings.Contains(ev.Message.Text, "wire") {
			return warden.Decision{Verdict: warden.Ask, Reason: "money moves need approval", PolicyID: "ask-wire"}, nil
		}
		return warden.Decision{Verdict: warden.Abstain}, nil
	})
	up := newUpstream(t, false, nil)
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st, Wait: time.Minute})
	t.Cleanup(m.Close)
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: askWire}), Views: catalog.Views, Store: st, Approvals: m})
	mux := http.NewServeMux()
	mux.Handle("/a2a/", New(heldCore{dec, m}, map[string]warden.Upstream{"echo": {Name: "echo", URL: up.URL}}, Options{}))
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)

	for _, approve := range []bool{true, false} {
		done := make(chan map[string]any, 1)
		go func() {
			done <- rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"wire 100 EUR"}]}}}`, "A2A-Version", "1.0")
		}()
		var id string
		for range 300 {
			list, _ := m.List(context.Background(), approval.ApprovalQuery{State: approval.ApprovalPending})
			if len(list) == 1 {
				id = list[0].ID
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if id == "" {
			t.Fatal("no pending approval")
		}
		before := len(up.methods())
		if before != 0 && approve {
			t.Fatalf("the held request reached the agent: %v", up.methods())
		}
		if _, err := m.Resolve(context.Background(), id, approve, warden.Principal{Name: "ops"}, "checked"); err != nil {
			t.Fatal(err)
		}
		resp := <-done
		if approve {
			if resp["result"] == nil || len(up.methods()) != 1 {
				t.Fatalf("approved: %v; agent saw %v", resp, up.methods())
			}
		} else if errCode(resp) != CodeDenied || !strings.Contains(resp["error"].(map[string]any)["message"].(string), "approval denied by ops") {
			t.Fatalf("denied: %v", resp)
		} else if len(up.methods()) != 1 {
			t.Fatalf("the denied request reached the agent: %v", up.methods())
		}
	}
}
