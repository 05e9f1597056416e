package mcpgate

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// heldCore decides with a Decider and holds asked steps with a Manager,
// as a Guardian with approvals does.
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

// askSend asks about every outbound tools/call of "send".
var askSend = warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
	if ev.Direction == warden.Outbound && ev.Tool.Name == "send" {
		return warden.Decision{Verdict: warden.Ask, Reason: "sending needs approval", PolicyID: "ask-send"}, nil
	}
	return warden.Decision{Verdict: warden.Abstain}, nil
})

// A held stdio request waits beside the session: later messages flow, an
// approval releases it to the server, a client's cancellation withdraws
// it (issue 9: surfaces that can wait hold the step).
func TestStdioHeldRequest(t *testing.T) {
	st := storetest.NewMem()
	m := approval.New(approval.Options{Store: st, Trace: st, Wait: time.Minute})
	t.Cleanup(m.Close)
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: askSend}), Views: catalog.Views, Store: st, Approvals: m})
	c2gR, c2gW := io.Pipe()
	g2cR, g2cW := io.Pipe()
	g2sR, g2sW := io.Pipe()
	s2gR, s2gW := io.Pipe()
	gw := NewStdio(heldCore{dec, m}, StdioOptions{Server: "mail", Logf: testLogf(t)})
	fromGW, srvIn := pump(g2cR), pump(g2sR)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		for _, c := range []io.Closer{c2gR, c2gW, g2cR, g2cW, g2sR, g2sW, s2gR, s2gW} {
			c.Close()
		}
	})
	go func() { _ = gw.Run(ctx, c2gR, g2cW, s2gR, g2sW) }()

	pending := func(n int) []approval.Approval {
		t.Helper()
		for range 200 {
			list, _ := m.List(context.Background(), approval.ApprovalQuery{State: approval.ApprovalPending})
			if len(list) == n {
				return list
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("want %d pending approvals", n)
		return nil
	}
	writeLine(t, c2gW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send","arguments":{"to":"bob"}}}`)
	a := pending(1)[0]
	writeLine(t, c2gW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := readMsg(t, srvIn); m["id"] != float64(2) {
		t.Fatalf("the server got %v first; the held request must not block the session", m)
	}
	if _, err := m.Resolve(context.Background(), a.ID, true, warden.Principal{Name: "ops"}, ""); err != nil {
		t.Fatal(err)
	}
	if got := readMsg(t, srvIn); got["id"] != float64(1) {
		t.Fatalf("after approval the server got %v", got)
	}
	writeLine(t, s2gW, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"sent"}]}}`)
	if got := readMsg(t, fromGW); got["id"] != float64(1) || got["result"] == nil {
		t.Fatalf("the client got %v", got)
	}

	// A cancelled held request is withdrawn and never reaches the server.
	writeLine(t, c2gW, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","arguments":{"to":"eve"}}}`)
	b := pending(1)[0]
	writeLine(t, c2gW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	if got := readMsg(t, srvIn); got["method"] != "notifications/cancelled" {
		t.Fatalf("the server got %v", got)
	}
	got := readMsg(t, fromGW)
	if got["id"] != float64(3) || errCode(got) != CodeDenied {
		t.Fatalf("the client got %v, want the denial of 3", got)
	}
	raw, _ := json.Marshal(got)
	b2, _ := m.Get(context.Background(), b.ID, "")
	if b2.State != approval.ApprovalExpired || !strings.Contains(b2.DecidedReason, "withdrawn") {
		t.Fatalf("the cancelled request's approval: %+v (client got %s)", b2, raw)
	}
	select {
	case l := <-srvIn:
		t.Fatalf("the server got %s", l)
	case <-time.After(100 * time.Millisecond):
	}
}
