package guardian_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

const aosToolCall = `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e1","toolId":"ls","inputs":[]},"context":{"session":{"id":"s1"}}}}`

// records returns the trace records whose results name guardian hook.
func records(st *storetest.Mem, hook string) []audit.Record {
	var out []audit.Record
	for _, r := range st.Records() {
		for _, res := range r.Results {
			if res.Guardian == hook && res.Mode == "async" {
				out = append(out, r)
			}
		}
	}
	return out
}

// An async hook declared on an AOS method runs for an /aos request: the
// Decider starts async hooks for every surface (issue 7, measurement 3).
func TestAsyncHookRunsForAOS(t *testing.T) {
	dir := t.TempDir()
	script := write(t, dir, "audit.sh", "#!/bin/sh\ncat >/dev/null\n")
	cfg := write(t, dir, "warden.yaml", "hooks:\n  - name: audit\n    events: [steps/toolCallRequest]\n    mode: async\n    command: ["+script+"]\n")
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	h := aos.NewHandler(gd, aos.Options{})
	if resp := h.Handle(context.Background(), []byte(aosToolCall)); !strings.Contains(string(resp), `"decision":"allow"`) {
		t.Fatalf("answer %s", resp)
	}
	if err := gd.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs := records(st, "audit")
	if len(rs) != 1 || rs[0].Results[0].Error != "" || rs[0].Event != "steps/toolCallRequest" || rs[0].Surface != warden.SurfaceAOS {
		t.Fatalf("async records %+v", rs)
	}
}

// At shutdown, async runs still queued when the grace period ends are
// recorded as dropped, one record each (measurement 3: 500 vanished).
func TestQueuedAsyncRunsRecordedAsDroppedAtShutdown(t *testing.T) {
	dir := t.TempDir()
	script := write(t, dir, "slow.sh", "#!/bin/sh\ncat >/dev/null\nsleep 2\n")
	cfg := write(t, dir, "warden.yaml", "hooks:\n  - name: slow\n    events: [tool.post_call]\n    mode: async\n    timeout: 10s\n    command: ["+script+"]\n")
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{ConfigFile: cfg, Store: st, AsyncWorkers: 1, AsyncQueue: 600})
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for range n {
		if _, err := gd.Dispatch(context.Background(), "tool.post_call", []byte(`{"session_id":"s","tool_name":"ls"}`)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := gd.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 8*time.Second {
		t.Fatalf("Close took %v", d)
	}
	rs := records(st, "slow")
	dropped := 0
	for _, r := range rs {
		if strings.HasPrefix(r.Results[0].Error, "dropped: shut down") {
			dropped++
		}
	}
	// One run may be in flight (killed at its own timeout or finished);
	// every other one is a dropped record.
	if dropped < n-1 {
		t.Fatalf("%d of %d queued runs recorded as dropped (%d async records)", dropped, n, len(rs))
	}
}

// Layering (measurement 7): the catalog does not import the AOS wire
// adapter, and the gateways do not pull in the policy engine's CEL.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	deps := func(pkgs ...string) string {
		out, err := exec.Command(goBin, append([]string{"list", "-deps"}, pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return string(out)
	}
	if d := deps("../catalog"); strings.Contains(d, "github.com/wardenhq/warden/aos\n") {
		t.Error("catalog imports aos")
	}
	d := deps("../mcpgate", "../a2agate")
	for _, bad := range []string{"cel.dev/", "github.com/wardenhq/warden/policy", "github.com/wardenhq/warden/config", "github.com/wardenhq/warden/hooks"} {
		if strings.Contains(d, bad) {
			t.Errorf("the gateways depend on %s", bad)
		}
	}
}

// Records are ready for replay (issue 7): each carries the revision of the
// policy set that decided and the views the policies read.
func TestRecordCarriesRevisionAndViews(t *testing.T) {
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	out, err := gd.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
		"session_id": "s9", "tool_name": "http_post", "tool_input": map[string]any{"body": "AKIAIOSFODNN7EXAMPLE"}}})
	if err != nil || out.Verdict != warden.Deny {
		t.Fatalf("%v %v", out.Verdict, err)
	}
	rs := st.Records()
	if len(rs) != 1 {
		t.Fatalf("%d records", len(rs))
	}
	r := rs[0]
	if r.PolicyRevision == "" || r.PolicyRevision != gd.Policies().Revision() {
		t.Errorf("policy_revision %q, the set's %q", r.PolicyRevision, gd.Policies().Revision())
	}
	var v struct {
		Session struct{ ID string }
		Tool    struct {
			Name string
			Args map[string]any
		}
	}
	if err := json.Unmarshal(r.Views, &v); err != nil || v.Session.ID != "s9" || v.Tool.Name != "http_post" || v.Tool.Args["body"] == nil {
		t.Errorf("views %s (%v)", r.Views, err)
	}
}
