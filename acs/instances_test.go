package acs

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
	"github.com/wardenhq/warden/sqlite"
)

// sessionStore is what two instances share: the trace and the ACS state.
type sessionStore interface {
	audit.Store
	acsstate.Store
}

// TestTwoInstancesOneSession: two wardens sharing one data directory (two
// processes' SQLite stores) serve one session: requests alternating between
// them, then twenty at once on both, keep one verifiable chain, and a
// request_id one of them accepted is a replay at the other.
func TestTwoInstancesOneSession(t *testing.T) {
	dir := t.TempDir()
	twoInstancesOneSession(t, func() (sessionStore, error) { return sqlite.Open(dir, sqlite.Options{}) })
}

// TestFleetOneSessionPostgres: the same with two replicas, each with its
// own PostgreSQL store on one database.
func TestFleetOneSessionPostgres(t *testing.T) {
	url := pgtest.SchemaURL(t)
	twoInstancesOneSession(t, func() (sessionStore, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return postgres.Open(ctx, url, postgres.Options{})
	})
}

func twoInstancesOneSession(t *testing.T, open func() (sessionStore, error)) {
	now := time.Now()
	var hs [2]*Handler
	var sts [2]sessionStore
	for i := range hs {
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		sts[i] = st
		g, err := guardian.Open(guardian.Options{Policies: []string{"testdata/policies.yaml"}, NoBuiltin: true, Store: st, Data: t.TempDir()})
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
			t.Error(err)
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
	// Twenty steps at once, ten on each instance.
	const burst = 20
	msgs := make([]map[string]any, burst)
	for i := range msgs {
		msgs[i] = s.msg("steps/toolCallRequest", toolCall("ls", map[string]any{"burst": i}), nil)
	}
	var wg sync.WaitGroup
	for i, m := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := send(i%2, m); r["error"] != nil {
				t.Errorf("burst step %d: %v", i, r["error"])
			}
		}()
	}
	wg.Wait()
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
	if h, err := VerifyEntries(es); err != nil || len(es) != 6+burst+1 {
		t.Fatalf("%d entries (want %d), head %s: %v", len(es), 6+burst+1, h, err)
	}
}
