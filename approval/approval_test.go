package approval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// asker asks about every tool call, and changes the payload when modify is
// set (an ask with a modify before it).
func asker(modify bool) warden.Handler {
	return warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
		d := warden.Decision{Verdict: warden.Ask, Reason: "sending needs approval", PolicyID: "needs-approval", ReasonCodes: []string{"needs-approval"}}
		if modify {
			p := map[string]any{}
			for k, v := range ev.Payload {
				p[k] = v
			}
			p["note"] = "changed"
			return warden.Decision{Verdict: warden.Modify, Payload: p, Reason: "changed"}, nil
		}
		return d, nil
	})
}

type fixture struct {
	st  *storetest.Mem
	m   *approval.Manager
	dec *pipeline.Pipeline
}

func newFixture(t *testing.T, o approval.Options, steps ...warden.Step) *fixture {
	t.Helper()
	st := storetest.NewMem()
	o.Store, o.Trace = st, st
	m := approval.New(o)
	t.Cleanup(m.Close)
	if len(steps) == 0 {
		steps = []warden.Step{{Name: "policy", Handler: asker(false)}}
	}
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, steps...), Views: catalog.Views, Store: st, Approvals: m})
	return &fixture{st: st, m: m, dec: dec}
}

// step is an AOS tool call (answered at once) or an MCP tools/call (held).
func step(surface, to string) *warden.Event {
	if surface == warden.SurfaceMCP {
		return &warden.Event{Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Outbound,
			Payload: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": "send_email", "arguments": map[string]any{"to": to}}},
			Envelope: warden.Envelope{SessionID: "s1", Server: "mail"}}
	}
	return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "x" + to, "toolId": "send_email",
			"inputs": []any{map[string]any{"name": "to", "value": to}}},
		"context": map[string]any{"session": map[string]any{"id": "s1"}}}}
}

func (f *fixture) record(t *testing.T, id string) audit.Record {
	t.Helper()
	for _, r := range f.st.Records() {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no record %s", id)
	return audit.Record{}
}

// The AOS loop: an asked step is refused at once with its approval id; once
// approved, the identical step is allowed once, and a changed argument is
// not (issue 9 acceptance: AOS retry loop).
func TestAnsweredAtOnceRetryLoop(t *testing.T) {
	f := newFixture(t, approval.Options{TTL: time.Minute})
	ctx := context.Background()
	out, err := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com"))
	if err != nil || out.Verdict != warden.Ask || out.ApprovalID == "" {
		t.Fatalf("first ask: %v %+v", err, out)
	}
	rec := f.record(t, out.RecordID)
	if rec.Decision != "ask" || rec.ApprovalID != out.ApprovalID {
		t.Fatalf("the asking record: decision %s approval %q", rec.Decision, rec.ApprovalID)
	}
	a, err := f.m.Get(ctx, out.ApprovalID, "")
	if err != nil || a.State != approval.ApprovalPending || a.Hold || a.RecordID != out.RecordID ||
		a.Tool != "send_email" || a.SessionID != "s1" || a.PolicyID != "needs-approval" || !strings.Contains(a.Summary, "bob@example.com") {
		t.Fatalf("approval %+v, %v", a, err)
	}
	// Retrying before the approval: asked again, the same approval (an
	// agent polling by retrying does not pile up approvals).
	again, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com"))
	if again.Verdict != warden.Ask || again.ApprovalID != out.ApprovalID {
		t.Fatalf("retry before approval: %+v", again)
	}
	if list, _ := f.m.List(ctx, approval.ApprovalQuery{}); len(list) != 1 {
		t.Fatalf("%d approvals after a retry, want 1", len(list))
	}
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "ops"}, "known customer"); err != nil {
		t.Fatal(err)
	}
	a, _ = f.m.Get(ctx, out.ApprovalID, "")
	if a.State != approval.ApprovalApproved || a.DecidedBy != "ops" || a.DecisionRecordID == "" {
		t.Fatalf("approved: %+v", a)
	}
	drec := f.record(t, a.DecisionRecordID)
	if drec.Surface != warden.SurfaceApproval || drec.Decision != "allow" || drec.ApprovalID != a.ID || drec.Caller != "ops" {
		t.Fatalf("the approval's own record: %+v", drec)
	}
	// A changed argument is another step.
	changed, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "eve@example.com"))
	if changed.Verdict != warden.Ask {
		t.Fatalf("changed argument: %s", changed.Verdict)
	}
	// The identical step (another execution id) is allowed, once.
	ok, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com"))
	if ok.Verdict != warden.Allow || ok.ApprovalID != out.ApprovalID || !strings.Contains(ok.Reason, "approved by ops") {
		t.Fatalf("approved retry: %+v", ok)
	}
	if r := f.record(t, ok.RecordID); r.Decision != "allow" || r.ApprovalID != out.ApprovalID {
		t.Fatalf("the retry's record: %+v", r)
	}
	if a, _ = f.m.Get(ctx, out.ApprovalID, ""); a.UsedRecordID != ok.RecordID {
		t.Fatalf("the approval names the retry that used it: %+v", a)
	}
	if twice, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com")); twice.Verdict != warden.Ask {
		t.Fatalf("a second retry: %s, want ask (an approval is used once)", twice.Verdict)
	}
}

// An approved retry after the TTL is asked again.
func TestRetryAfterTTL(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixture(t, approval.Options{TTL: time.Minute, Now: clock})
	ctx := context.Background()
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com"))
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{}, ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if late, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "bob@example.com")); late.Verdict != warden.Ask {
		t.Fatalf("retry after the TTL: %s", late.Verdict)
	}
}

// A held surface waits: approved → the step is taken; denied → refused
// with the approver's reason; nobody → approval_timeout; the caller hangs
// up → withdrawn. Each end is recorded and linked.
func TestHeldCall(t *testing.T) {
	cases := []struct {
		name     string
		act      func(f *fixture, id string, cancel context.CancelFunc)
		want     warden.Verdict
		code     string
		state    approval.ApprovalState
		decision string
	}{
		{"approved", func(f *fixture, id string, _ context.CancelFunc) {
			_, _ = f.m.Resolve(context.Background(), id, true, warden.Principal{Name: "ops"}, "fine")
		}, warden.Allow, warden.CodeApprovalGranted, approval.ApprovalApproved, "allow"},
		{"denied", func(f *fixture, id string, _ context.CancelFunc) {
			_, _ = f.m.Resolve(context.Background(), id, false, warden.Principal{Name: "ops"}, "not this one")
		}, warden.Deny, warden.CodeApprovalDenied, approval.ApprovalDenied, "deny"},
		{"timeout", func(*fixture, string, context.CancelFunc) {}, warden.Deny, warden.CodeApprovalTimeout, approval.ApprovalExpired, "deny"},
		{"caller hangs up", func(_ *fixture, _ string, cancel context.CancelFunc) { cancel() }, warden.Deny, warden.CodeApprovalTimeout, approval.ApprovalExpired, "deny"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, approval.Options{Wait: 300 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, _ := f.dec.Decide(ctx, step(warden.SurfaceMCP, "bob@example.com"))
			if out.Verdict != warden.Ask || out.ApprovalID == "" {
				t.Fatalf("ask: %+v", out)
			}
			a, _ := f.m.Get(ctx, out.ApprovalID, "")
			if !a.Hold || a.Expires.Sub(a.Created) != 300*time.Millisecond {
				t.Fatalf("held approval: %+v", a)
			}
			go func() {
				time.Sleep(50 * time.Millisecond)
				c.act(f, out.ApprovalID, cancel)
			}()
			start := time.Now()
			got := f.m.Await(ctx, out)
			if got.Verdict != c.want || got.ReasonCodes[0] != c.code {
				t.Fatalf("settled: %s %v %q", got.Verdict, got.ReasonCodes, got.Reason)
			}
			if c.name == "approved" && time.Since(start) > 250*time.Millisecond {
				t.Errorf("the approval released the call after %v", time.Since(start))
			}
			a, _ = f.m.Get(context.Background(), out.ApprovalID, "")
			if a.State != c.state || a.DecisionRecordID == "" {
				t.Fatalf("approval after: %+v", a)
			}
			if r := f.record(t, a.DecisionRecordID); r.Decision != c.decision || r.ApprovalID != a.ID {
				t.Fatalf("decision record %+v", r)
			}
			// What was approved is the call released: the same step again
			// is asked again.
			if again, _ := f.dec.Decide(context.Background(), step(warden.SurfaceMCP, "bob@example.com")); again.Verdict != warden.Ask || again.ApprovalID == a.ID {
				t.Errorf("the same held step again: %s (approval %s)", again.Verdict, again.ApprovalID)
			}
			if c.name == "caller hangs up" && !strings.Contains(a.DecidedReason, "withdrawn") {
				t.Errorf("withdrawn reason %q", a.DecidedReason)
			}
		})
	}
}

// An ask that a guardian's modify preceded is taken modified once approved.
func TestApprovedModify(t *testing.T) {
	f := newFixture(t, approval.Options{}, warden.Step{Name: "m", Handler: asker(true)}, warden.Step{Name: "a", Handler: asker(false)})
	ctx := context.Background()
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceMCP, "bob@example.com"))
	if out.Verdict != warden.Ask || out.Payload == nil {
		t.Fatalf("ask with a modify: %+v", out)
	}
	go func() { _, _ = f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{}, "") }()
	got := f.m.Await(ctx, out)
	if got.Verdict != warden.Modify || got.Payload["note"] != "changed" {
		t.Fatalf("approved modify: %+v", got)
	}
}

// Deciding twice, deciding an expired approval, another tenant's approval.
func TestDecideConflicts(t *testing.T) {
	f := newFixture(t, approval.Options{Wait: 100 * time.Millisecond})
	ctx := warden.WithPrincipal(context.Background(), warden.Principal{Name: "agent", Tenant: "acme"})
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "a@example.com"))
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "beta-ops", Tenant: "beta"}, ""); !errors.Is(err, approval.ErrApprovalNotFound) {
		t.Fatalf("another tenant's approver: %v", err)
	}
	if _, err := f.m.Resolve(ctx, out.ApprovalID, false, warden.Principal{Name: "ops"}, "no"); err != nil {
		t.Fatal(err)
	}
	a, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "ops"}, "")
	if !errors.Is(err, approval.ErrApprovalDecided) || a == nil || a.State != approval.ApprovalDenied {
		t.Fatalf("second decision: %v %+v", err, a)
	}
	held, _ := f.dec.Decide(ctx, step(warden.SurfaceMCP, "b@example.com"))
	f.m.Await(ctx, held) // times out
	if _, err := f.m.Resolve(ctx, held.ApprovalID, true, warden.Principal{}, ""); !errors.Is(err, approval.ErrApprovalDecided) {
		t.Fatalf("deciding an expired approval: %v", err)
	}
	if _, err := f.m.Resolve(ctx, "nope", true, warden.Principal{}, ""); !errors.Is(err, approval.ErrApprovalNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

// Streams see every approval created and decided.
func TestSubscribe(t *testing.T) {
	f := newFixture(t, approval.Options{})
	ch, cancel, ok := f.m.Subscribe()
	if !ok {
		t.Fatal("subscribe")
	}
	defer cancel()
	ctx := context.Background()
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "a@example.com"))
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{}, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []approval.ApprovalState{approval.ApprovalPending, approval.ApprovalApproved} {
		select {
		case a := <-ch:
			if a.ID != out.ApprovalID || a.State != want {
				t.Fatalf("stream: %s %s, want %s", a.ID, a.State, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("stream: no %s event", want)
		}
	}
}

// The summary is redacted before it is cut, so a secret at the cut is
// never kept in part.
func TestSummaryRedactedBeforeCut(t *testing.T) {
	long := strings.Repeat("x", 220) + " AKIAIOSFODNN7EXAMPLE"
	ev := step(warden.SurfaceMCP, long)
	catalog.Views(ev)
	redact := func(s string) string {
		return strings.ReplaceAll(s, "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key:0]")
	}
	s := approval.Summary(ev, redact)
	if strings.Contains(s, "AKIA") || len(s) > 240+len("…") {
		t.Fatalf("summary %q", s)
	}
}

// The key ignores ids, key order and number formatting, and changes with
// any argument, the tool, the session or the tenant.
func TestKey(t *testing.T) {
	mk := func(args map[string]any, session, tenant string) string {
		ev := &warden.Event{Name: "tool.pre_call", Surface: warden.SurfaceHooks, Payload: map[string]any{
			"session_id": session, "tool_name": "pay", "tool_input": args}}
		ev.Principal.Tenant = tenant
		catalog.Views(ev)
		k, err := approval.Key(ev)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := mk(map[string]any{"amount": 10.0, "to": "bob"}, "s1", "")
	if mk(map[string]any{"to": "bob", "amount": 1e1}, "s1", "") != base {
		t.Error("key order or number formatting changed the key")
	}
	for name, k := range map[string]string{
		"argument": mk(map[string]any{"amount": 11.0, "to": "bob"}, "s1", ""),
		"session":  mk(map[string]any{"amount": 10.0, "to": "bob"}, "s2", ""),
		"tenant":   mk(map[string]any{"amount": 10.0, "to": "bob"}, "s1", "acme"),
	} {
		if k == base {
			t.Errorf("a changed %s kept the key", name)
		}
	}
}

// One session cannot have more than MaxPendingPerSession approvals pending:
// the next asked step is refused (approval_unavailable), other sessions are
// not affected.
func TestPendingBoundPerSession(t *testing.T) {
	f := newFixture(t, approval.Options{})
	ctx := context.Background()
	for i := range approval.MaxPendingPerSession {
		if out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, fmt.Sprintf("u%d@example.com", i))); out.Verdict != warden.Ask {
			t.Fatalf("step %d: %s", i, out.Verdict)
		}
	}
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "one-too-many@example.com"))
	if out.Verdict != warden.Deny || out.ReasonCodes[0] != warden.CodeApprovalUnavailable || !strings.Contains(out.Reason, "too many approvals pending") {
		t.Fatalf("over the bound: %+v", out)
	}
	other := step(warden.SurfaceAOS, "x@example.com")
	other.Payload["context"] = map[string]any{"session": map[string]any{"id": "s2"}}
	if out, _ := f.dec.Decide(ctx, other); out.Verdict != warden.Ask {
		t.Fatalf("another session: %s", out.Verdict)
	}
}

// The token that asked cannot approve its own step.
func TestNoSelfApproval(t *testing.T) {
	f := newFixture(t, approval.Options{})
	ctx := warden.WithPrincipal(context.Background(), warden.Principal{Name: "root"})
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceAOS, "a@example.com"))
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "root"}, ""); !errors.Is(err, approval.ErrSelfApproval) {
		t.Fatalf("self-approval: %v", err)
	}
	if _, err := f.m.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "ops"}, ""); err != nil {
		t.Fatalf("another approver: %v", err)
	}
}

// A call held here is let go within about a second when another process
// sharing the store decides its approval (the server's console deciding a
// call `warden mcp stdio` holds).
func TestDecidedByAnotherProcess(t *testing.T) {
	f := newFixture(t, approval.Options{Wait: time.Minute})
	other := approval.New(approval.Options{Store: f.st, Trace: f.st})
	defer other.Close()
	ctx := context.Background()
	out, _ := f.dec.Decide(ctx, step(warden.SurfaceMCP, "bob@example.com"))
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = other.Resolve(ctx, out.ApprovalID, true, warden.Principal{Name: "ops"}, "")
	}()
	start := time.Now()
	got := f.m.Await(ctx, out)
	if got.Verdict != warden.Allow || time.Since(start) > 3*time.Second {
		t.Fatalf("held call decided elsewhere: %s after %v", got.Verdict, time.Since(start))
	}
}
