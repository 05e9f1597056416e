package guardian_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
)

// Hook dispatch holds an asked step until it is decided, through a
// Guardian whose trace (a data dir) keeps approvals; the Go API's Await
// does the same for a Decide that asked.
func TestDispatchHoldsAskedStep(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ask.yaml", "id: ask-pay\nversion: \"1\"\nevents: [tool.pre_call, steps/toolCallRequest]\nwhen: 'tool.name == \"pay\"'\ndecision: ask\nreason: payments need approval\n")
	cfg := write(t, dir, "warden.yaml", "policies: [./ask.yaml]\napprovals: {wait: 30s}\n")
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Data: filepath.Join(dir, "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	ctx := context.Background()
	for _, c := range []struct {
		approve bool
		want    string
	}{{true, "allow"}, {false, "deny"}} {
		done := make(chan string, 1)
		go func() {
			res, err := gd.Dispatch(ctx, "tool.pre_call", []byte(`{"session_id":"s1","tool_name":"pay","tool_input":{"amount":5}}`))
			if err != nil {
				done <- err.Error()
				return
			}
			done <- res.Decision
		}()
		var id string
		for range 300 {
			list, _ := gd.Approvals().List(ctx, approval.ApprovalQuery{State: approval.ApprovalPending})
			if len(list) == 1 {
				id = list[0].ID
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if id == "" {
			t.Fatal("no pending approval")
		}
		select {
		case d := <-done:
			t.Fatalf("dispatch answered %q before the approval was decided", d)
		default:
		}
		if _, err := gd.Approvals().Resolve(ctx, id, c.approve, warden.Principal{Name: "ops"}, ""); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-done:
			if d != c.want {
				t.Fatalf("approve=%v: dispatch answered %q, want %s", c.approve, d, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("dispatch still held after the decision")
		}
	}

	// The Go API: Decide asks, Await holds.
	out, err := gd.Decide(ctx, toolCall("pay"))
	if err != nil || out.Verdict != warden.Ask || out.ApprovalID == "" {
		t.Fatalf("decide: %v %+v", err, out)
	}
	go func() { _, _ = gd.Approvals().Resolve(ctx, out.ApprovalID, true, warden.Principal{}, "ok") }()
	if got := gd.Await(ctx, out); got.Verdict != warden.Allow {
		t.Fatalf("await: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
}
