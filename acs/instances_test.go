package acs

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/sqlite"
)

// TestTwoInstancesOneSession: two wardens sharing one data directory (two
// processes' stores) serve one session alternately: one chain, and a
// request_id one of them accepted is a replay at the other.
func TestTwoInstancesOneSession(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var hs [2]*Handler
	var sts [2]*sqlite.Store
	for i := range hs {
		st, err := sqlite.Open(dir, sqlite.Options{})
		sts[i] = st
		if err != nil {
			t.Fatal(err)
		}
		g, err := guardian.Open(guardian.Options{Policies: []string{"testdata/policies.yaml"}, NoBuiltin: true, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()); st.Close() })
		if hs[i], err = NewHandler(g, Options{Sessions: st, Keys: map[string][]byte{"k1": testKey}, RequireSignatures: true,
			Approvals: true, Now: func() time.Time { return now }}); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{t: t, now: now}
	s := f.session()
	send := func(i int, m map[string]any) map[string]any {
		b, _ := json.Marshal(m)
		var a map[string]any
		if err := json.Unmarshal(hs[i].Handle(context.Background(), b, "http"), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if r := send(0, s.msg(MethodHello, helloPayload(allHooks...), nil)); r["error"] != nil {
		t.Fatal(r["error"])
	}
	head := ""
	for i := range 6 {
		res := result(t, send(i%2, s.msg("steps/toolCallRequest", toolCall("ls", map[string]any{"n": i}), func(p map[string]any) {
			if head != "" {
				p["metadata"].(map[string]any)["session_state"] = map[string]any{"chain_hash": head}
			}
		})))
		if res["decision"] != "allow" {
			t.Fatalf("step %d: %v", i, res)
		}
		head = res["chain_hash"].(string)
	}
	m := s.msg("steps/toolCallRequest", toolCall("ls", nil), nil)
	if r := send(0, m); r["error"] != nil {
		t.Fatal(r["error"])
	}
	if r := send(1, m); errCode(r) != CodeReplayDetected {
		t.Fatalf("the other instance accepted a replay: %v", r)
	}
	es, err := sts[1].ACSEntries(context.Background(), s.id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := VerifyEntries(es); err != nil || len(es) != 7 {
		t.Fatalf("%d entries, head %s: %v", len(es), h, err)
	}
}
