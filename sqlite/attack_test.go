package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracehash"
	"github.com/wardenhq/warden/storetest"
)

// The attacks on `warden verify` (docs/verify.md, docs/security.md): an
// editor of trace.db who blanks the hashes, or edits a record and
// recomputes every hash after it, or edits what the chain did not cover
// (runs.shadow, the approvals table), must not get an "ok".

// attackTrace records seven records, the fourth a deny, and closes the
// store.
func attackTrace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir, Options{})
	t0 := time.Now()
	for i, id := range []string{"a1", "a2", "a3", "deny", "a5", "a6", "a7"} {
		r := testRecord(id, t0.Add(time.Duration(i)*time.Millisecond))
		if id == "deny" {
			r.Decision, r.Reason, r.PolicyID = "deny", "rm -rf is not allowed", "no-rm"
			r.Results = []warden.Result{{Guardian: "policy", PolicyID: "no-rm", Decision: "deny", Mode: "enforce", Reason: r.Reason}}
		}
		recordAll(t, s, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := verifyDir(t, dir); !rep.OK() || rep.Verified != 7 {
		t.Fatalf("the untouched trace: %+v %+v", rep, rep.Broken)
	}
	return dir
}

// TestAttackVerifyBlankedHashes: blanking every hash and prev_hash made
// verify skip the records as "from before the hash chain" and say ok.
func TestAttackVerifyBlankedHashes(t *testing.T) {
	dir := attackTrace(t)
	sqlExec(t, rawDB(t, dir), `UPDATE runs SET hash = x'', prev_hash = x''`)
	rep := verifyDir(t, dir)
	if rep.OK() {
		t.Fatalf("verify of a trace whose hashes were blanked: ok (%d records skipped as from before the chain)", rep.Legacy)
	}
	t.Logf("%s: %s", rep.Broken.Reason, rep.Broken.Detail)
}

// rehashV1 recomputes every row's hash with the unkeyed chain (SHA-256,
// the v1 encoding), as an editor with the database and docs/verify.md can.
func rehashV1(t *testing.T, dir string) {
	t.Helper()
	db := rawDB(t, dir)
	blobs, err := os.ReadFile(filepath.Join(dir, BlobFileName))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT rowid, id, time, event, surface, direction, request_id,
		agent_id, session_id, turn_id, step_id, decision, reason, coalesce(reason_codes, ''),
		policy_id, policy_version, latency_us, blob_off, results_len, input_len,
		output_len, policy_revision, views_len, caller, tenant, approval_id, tool FROM runs ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	type upd struct {
		rowid      int64
		prev, hash []byte
	}
	var ups []upd
	var prev []byte
	c := tracehash.NewCanon()
	for rows.Next() {
		var f tracehash.Row
		var rowid, off, nr, ni, no, nv int64
		var codes string
		if err := rows.Scan(&rowid, &f.ID, &f.TimeUS, &f.Event, &f.Surface, &f.Direction, &f.RequestID,
			&f.AgentID, &f.SessionID, &f.TurnID, &f.StepID, &f.Decision, &f.Reason, &codes,
			&f.PolicyID, &f.PolicyVersion, &f.LatencyUS, &off, &nr, &ni, &no, &f.PolicyRevision, &nv,
			&f.Caller, &f.Tenant, &f.ApprovalID, &f.Tool); err != nil {
			t.Fatal(err)
		}
		if codes != "" {
			f.ReasonCodes = []byte(codes)
		}
		b := blobs[off : off+nr+ni+no+nv]
		f.Results, f.Input, f.Output, f.Views = b[:nr], b[nr:nr+ni], b[nr+ni:nr+ni+no], b[nr+ni+no:]
		var content [tracehash.Size]byte
		c.Digest(&f, &content)
		h := tracehash.Chain(&content, prev)
		ups = append(ups, upd{rowid, append([]byte{}, prev...), h[:]})
		prev = h[:]
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, u := range ups {
		sqlExec(t, db, `UPDATE runs SET prev_hash = ?, hash = ? WHERE rowid = ?`, u.prev, u.hash, u.rowid)
	}
}

// TestAttackVerifyRecomputedChain: a deny edited into an allow, every
// hash recomputed with the published (unkeyed) algorithm: verify said ok.
func TestAttackVerifyRecomputedChain(t *testing.T) {
	dir := attackTrace(t)
	sqlExec(t, rawDB(t, dir), `UPDATE runs SET decision = 'allow', reason = '' WHERE id = 'deny'`)
	rehashV1(t, dir)
	rep := verifyDir(t, dir)
	if rep.OK() {
		t.Fatalf("verify of a trace edited (deny into allow) and rehashed: ok, %d records", rep.Verified)
	}
	t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
}

// TestAttackVerifyShadowEdited: runs.shadow (what the shadow set would
// have decided, which `warden runs --shadow-disagrees` filters on) was
// outside the hash.
func TestAttackVerifyShadowEdited(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	r := testRecord("shadowed", time.Now())
	r.Results = append(r.Results, warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet,
		Mode: warden.ModeShadow, Decision: "deny", PolicyID: "candidate"})
	recordAll(t, s, r, testRecord("after", time.Now()))
	s.Close()
	if rep := verifyDir(t, dir); !rep.OK() {
		t.Fatalf("the untouched trace: %+v", rep.Broken)
	}
	// The shadow set disagreed (deny); the edit hides it from
	// --shadow-disagrees.
	sqlExec(t, rawDB(t, dir), `UPDATE runs SET shadow = 'allow' WHERE id = 'shadowed'`)
	rep := verifyDir(t, dir)
	if rep.OK() {
		t.Fatal("verify of a trace whose runs.shadow was edited: ok")
	}
	t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
}

// TestAttackVerifyApprovalEdited: an approval's state, approver or use in
// the approvals table, which the chain does not hold, edited.
func TestAttackVerifyApprovalEdited(t *testing.T) {
	for _, e := range storetest.ApprovalEdits(storetest.ApprovalTrace{}) {
		t.Run(e.Name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			f := storetest.RecordApprovalTrace(t, s)
			s.Close()
			if rep := verifyDir(t, dir); !rep.OK() {
				t.Fatalf("the untouched trace: %+v", rep.Broken)
			}
			var id string
			for _, x := range storetest.ApprovalEdits(f) {
				if x.Name == e.Name {
					id = x.ID
				}
			}
			db := rawDB(t, dir)
			res, err := db.Exec(strings.ReplaceAll(e.SQL, "$1", "?"), id)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("%s: %v (%d rows)", e.SQL, err, n)
			}
			rep := verifyDir(t, dir)
			if rep.OK() {
				t.Fatalf("verify after %s: ok", e.SQL)
			}
			t.Logf("%s: %s", rep.Broken.Reason, rep.Broken.Detail)
		})
	}
}
