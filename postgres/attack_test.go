package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracehash"
	"github.com/wardenhq/warden/storetest"
)

// The attacks on `warden verify --store` (docs/verify.md), as the SQLite
// store's (sqlite/attack_test.go).

// attackStore records seven records, the fourth a deny.
func attackStore(t *testing.T) (*Store, string) {
	t.Helper()
	url := testSchemaURL(t)
	s := openTest(t, url, Options{})
	t0 := time.Now()
	for i, id := range []string{"a1", "a2", "a3", "deny", "a5", "a6", "a7"} {
		r := &audit.Record{ID: id, Time: t0.Add(time.Duration(i) * time.Millisecond), Event: "steps/toolCallRequest",
			Surface: "aos", SessionID: "sess", AgentID: "agent", Decision: "allow", Tool: "bash",
			Results: []warden.Result{{Guardian: "policy", Decision: "allow", Mode: "enforce"}}}
		if id == "deny" {
			r.Decision, r.Reason, r.PolicyID = "deny", "rm -rf is not allowed", "no-rm"
		}
		if err := s.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() || rep.Verified != 7 {
		t.Fatalf("the untouched trace: %+v %v", rep, err)
	}
	return s, url
}

func pgExec(t *testing.T, url, q string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return tag.RowsAffected()
}

func mustVerifyBroken(t *testing.T, s *Store, what string) {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("verify after %s: ok, %d records", what, rep.Verified)
	}
	t.Logf("%s: %s at %s: %s", what, rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
}

// TestAttackVerifyBlankedHashes: every hash and prev_hash blanked.
func TestAttackVerifyBlankedHashes(t *testing.T) {
	s, url := attackStore(t)
	pgExec(t, url, `UPDATE runs SET hash = '\x', prev_hash = '\x'`)
	mustVerifyBroken(t, s, "blanking every hash")
}

// rehashV1 recomputes every row's hash with the unkeyed chain (SHA-256,
// the v1 encoding), as an editor with the database and docs/verify.md can.
func rehashV1(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, scanCols+` ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	type upd struct {
		seq        int64
		prev, hash []byte
	}
	var ups []upd
	var prev []byte
	c := tracehash.NewCanon()
	for rows.Next() {
		var w row
		if err := rows.Scan(w.dest()...); err != nil {
			t.Fatal(err)
		}
		r := &w.rec
		var content [tracehash.Size]byte
		c.Digest(&tracehash.Row{
			ID: r.ID, TimeUS: w.us, Event: r.Event, Surface: r.Surface, Direction: r.Direction,
			RequestID: r.RequestID, AgentID: r.AgentID, SessionID: r.SessionID,
			TurnID: r.TurnID, StepID: r.StepID, Decision: r.Decision, Reason: r.Reason,
			ReasonCodes: w.codes, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
			LatencyUS: r.LatencyUS, Results: w.results, Input: w.in, Output: w.out,
			PolicyRevision: r.PolicyRevision, Views: w.vws, Caller: r.Caller,
			Tenant: r.Tenant, ApprovalID: r.ApprovalID, Tool: r.Tool,
		}, &content)
		h := tracehash.Chain(&content, prev)
		ups = append(ups, upd{w.seq, nonNil(append([]byte(nil), prev...)), h[:]})
		prev = h[:]
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, u := range ups {
		if _, err := conn.Exec(ctx, `UPDATE runs SET prev_hash = $1, hash = $2 WHERE seq = $3`, u.prev, u.hash, u.seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `UPDATE trace_head SET hash = $1`, prev); err != nil {
		t.Fatal(err)
	}
}

// TestAttackVerifyRecomputedChain: a deny edited into an allow, every hash
// recomputed with the published (unkeyed) algorithm.
func TestAttackVerifyRecomputedChain(t *testing.T) {
	s, url := attackStore(t)
	pgExec(t, url, `UPDATE runs SET decision = 'allow', reason = '' WHERE id = 'deny'`)
	rehashV1(t, url)
	mustVerifyBroken(t, s, "a deny edited into an allow and every hash recomputed")
}

// TestAttackVerifyShadowEdited: runs.shadow edited.
func TestAttackVerifyShadowEdited(t *testing.T) {
	url := testSchemaURL(t)
	s := openTest(t, url, Options{})
	r := &audit.Record{ID: "shadowed", Time: time.Now(), Event: "steps/toolCallRequest", Surface: "aos",
		Decision: "allow", Results: []warden.Result{{Guardian: "policy", Decision: "allow", Mode: "enforce"},
			{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Mode: warden.ModeShadow, Decision: "deny"}}}
	if err := s.Record(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("the untouched trace: %+v %v", rep, err)
	}
	if n := pgExec(t, url, `UPDATE runs SET shadow = 'allow' WHERE id = 'shadowed'`); n != 1 {
		t.Fatalf("%d rows", n)
	}
	mustVerifyBroken(t, s, "runs.shadow edited")
}

// TestAttackVerifyApprovalEdited: an approval's state, approver or use
// edited in the approvals table.
func TestAttackVerifyApprovalEdited(t *testing.T) {
	for _, e := range storetest.ApprovalEdits(storetest.ApprovalTrace{}) {
		t.Run(e.Name, func(t *testing.T) {
			url := testSchemaURL(t)
			s := openTest(t, url, Options{})
			f := storetest.RecordApprovalTrace(t, s)
			if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
				t.Fatalf("the untouched trace: %+v %v", rep, err)
			}
			for _, x := range storetest.ApprovalEdits(f) {
				if x.Name == e.Name {
					if n := pgExec(t, url, x.SQL, x.ID); n != 1 {
						t.Fatalf("%s: %d rows", x.SQL, n)
					}
				}
			}
			mustVerifyBroken(t, s, e.SQL)
		})
	}
}
