package sqlite

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// chainTrace records n records from 16 goroutines at once, closes the
// store, reopens it and records 10 more (the chain goes on across a
// restart).
func chainTrace(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				r := testRecord(fmt.Sprintf("r%04d", i), time.Now())
				r.Reason = fmt.Sprintf("reason %d", i)
				r.ReasonCodes = []string{"code"}
				r.Input = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
				if err := s.Record(context.Background(), r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, Options{})
	for i := range 10 {
		recordAll(t, s, testRecord(fmt.Sprintf("after-%d", i), time.Now()))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func verifyDir(t *testing.T, dir string) *VerifyReport {
	t.Helper()
	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqlExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestChainConsistent(t *testing.T) {
	dir := t.TempDir()
	chainTrace(t, dir, 200)
	rep := verifyDir(t, dir)
	if !rep.OK() || rep.Verified != 210 || rep.Legacy != 0 {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
	// The records carry the chain; the newest's hash is the head.
	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := audit.Collect(context.Background(), s, audit.Query{Oldest: true}, everything)
	if err != nil {
		t.Fatal(err)
	}
	if all[0].PrevHash != "" || len(all[0].Hash) != 64 {
		t.Fatalf("first record %q %q", all[0].PrevHash, all[0].Hash)
	}
	for i := 1; i < len(all); i++ {
		if all[i].PrevHash != all[i-1].Hash {
			t.Fatalf("record %d: prev_hash %s, previous hash %s", i, all[i].PrevHash, all[i-1].Hash)
		}
	}
	if rep.Head != all[len(all)-1].Hash {
		t.Fatalf("head %s, newest %s", rep.Head, all[len(all)-1].Hash)
	}
}

func TestVerifyDetects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string, db *sql.DB)
		reason string
		pos    int64
	}{
		{"edited reason", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET reason = 'nothing to see' WHERE rowid = 50`)
		}, BrokenEdited, 50},
		{"edited reason codes", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET reason_codes = NULL WHERE rowid = 7`)
		}, BrokenEdited, 7},
		{"edited hash", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET hash = zeroblob(32) WHERE rowid = 9`)
		}, BrokenEdited, 9},
		{"deleted row", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `DELETE FROM runs WHERE rowid = 100`)
		}, BrokenMissing, 100}, // the row after the gap is 100th now
		{"deleted first rows", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `DELETE FROM runs WHERE rowid <= 3`)
		}, BrokenMissing, 1},
		{"swapped rows", func(t *testing.T, _ string, db *sql.DB) {
			sqlExec(t, db, `CREATE TEMP TABLE r AS SELECT rowid AS rid, * FROM runs WHERE rowid IN (20, 30)`)
			sqlExec(t, db, `DELETE FROM runs WHERE rowid IN (20, 30)`)
			sqlExec(t, db, `INSERT INTO runs (rowid, id, time, event, surface, direction, request_id,
				agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
				policy_id, policy_version, latency_us, blob_off, results_len, input_len,
				output_len, policy_revision, views_len, caller, tenant, approval_id, tool,
				prev_hash, hash) SELECT CASE rid WHEN 20 THEN 30 ELSE 20 END, id, time, event, surface, direction, request_id,
				agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
				policy_id, policy_version, latency_us, blob_off, results_len, input_len,
				output_len, policy_revision, views_len, caller, tenant, approval_id, tool,
				prev_hash, hash FROM temp.r`)
		}, BrokenReordered, 20},
		{"edited blob byte", func(t *testing.T, dir string, db *sql.DB) {
			var off, nRes int64
			if err := db.QueryRow(`SELECT blob_off, results_len FROM runs WHERE rowid = 42`).Scan(&off, &nRes); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(dir, BlobFileName), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// The input is {"i":N} with N the writer's count: change N's
			// first digit (16 concurrent writers decide which N is at
			// rowid 42, so writing a fixed digit could leave it as it was).
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, off+nRes+5); err != nil {
				t.Fatal(err)
			}
			b[0] = '0' + (b[0]-'0'+1)%10
			if _, err := f.WriteAt(b, off+nRes+5); err != nil {
				t.Fatal(err)
			}
		}, BrokenEdited, 42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			chainTrace(t, dir, 150)
			tc.tamper(t, dir, rawDB(t, dir))
			rep := verifyDir(t, dir)
			if rep.OK() || rep.Broken.Reason != tc.reason || rep.Broken.Position != tc.pos {
				t.Fatalf("want %s at %d, got %+v %+v", tc.reason, tc.pos, rep, rep.Broken)
			}
			if rep.Verified != tc.pos-1 {
				t.Errorf("verified %d before the break at %d", rep.Verified, tc.pos)
			}
			t.Logf("%s: %s", rep.Broken.Reason, rep.Broken.Detail)
		})
	}
}

func TestVerifyLegacyRows(t *testing.T) {
	dir := t.TempDir()
	chainTrace(t, dir, 20)
	// Rows written before the chain have no hashes (and a trace from
	// before the chain key has no marker: the next Open writes it).
	makeLegacy(t, dir, `rowid <= 5`)
	sqlExec(t, rawDB(t, dir), `UPDATE runs SET prev_hash = x'' WHERE rowid = 6`)
	open(t, dir, Options{}).Close()
	// The writer restarts the chain after legacy rows; here the sixth row
	// was re-chained by hand, so it is edited now.
	if rep := verifyDir(t, dir); rep.OK() || rep.Legacy != 5 || rep.Broken.Reason != BrokenEdited {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}

	dir = t.TempDir()
	s := open(t, dir, Options{})
	recordAll(t, s, testRecord("old1", time.Now()), testRecord("old2", time.Now()))
	s.Close()
	makeLegacy(t, dir, `true`)
	s = open(t, dir, Options{})
	recordAll(t, s, testRecord("new1", time.Now()), testRecord("new2", time.Now()))
	s.Close()
	if rep := verifyDir(t, dir); !rep.OK() || rep.Legacy != 2 || rep.Verified != 2 {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}

// makeLegacy makes the rows where cond holds rows from before the hash
// chain (schema 6 and older: no hashes), in a trace from before the chain
// key (schema 14: no marker).
func makeLegacy(t *testing.T, dir, cond string) {
	t.Helper()
	db := rawDB(t, dir)
	sqlExec(t, db, `UPDATE runs SET hash = x'', prev_hash = x'' WHERE `+cond)
	sqlExec(t, db, `DELETE FROM trace_chain`)
}

func TestVerifyPrunedLegacyRows(t *testing.T) {
	dir := privateDir(t)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s := open(t, dir, Options{})
	for i := range 4 {
		recordAll(t, s, testRecord(fmt.Sprintf("old%d", i), t0.Add(time.Duration(i)*time.Hour)))
	}
	s.Close()
	makeLegacy(t, dir, `true`)
	s = open(t, dir, Options{})
	recordAll(t, s, testRecord("new0", t0.Add(10*time.Hour)), testRecord("new1", t0.Add(11*time.Hour)))
	now := t0.Add(13 * time.Hour)
	r := Retention{MaxAge: 11*time.Hour + 30*time.Minute, Now: func() time.Time { return now }}
	if st, err := s.Prune(context.Background(), r); err != nil || st.Deleted != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	s.Close()
	// The checkpoint of the legacy rows has no hash: the legacy rows left
	// are skipped, then the chain starts.
	if rep := verifyDir(t, dir); !rep.OK() || rep.Legacy != 2 || rep.Verified != 2 || rep.Checkpoint == nil {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}

func TestVerifyCheckpoint(t *testing.T) {
	dir := privateDir(t)
	s := open(t, dir, Options{})
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		recordAll(t, s, bigRecord(fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Hour)))
	}
	now := t0.Add(12 * time.Hour)
	r := Retention{MaxAge: 5 * time.Hour, Batch: 3, Now: func() time.Time { return now }}
	if st, err := s.Prune(context.Background(), r); err != nil || st.Deleted != 7 {
		t.Fatalf("%+v %v", st, err)
	}
	recordAll(t, s, bigRecord("r10", now))
	s.Close()
	if fi, err := os.Stat(filepath.Join(dir, SignKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", SignKeyFile, fi, err)
	}
	rep := verifyDir(t, dir)
	if !rep.OK() || rep.Verified != 4 || rep.Checkpoint == nil || rep.Checkpoint.LastID != "r6" {
		t.Fatalf("%+v %+v %+v", rep, rep.Broken, rep.Checkpoint)
	}

	// Everything pruned: the next record chains from the checkpoint.
	s = open(t, dir, Options{})
	all := Retention{MaxAge: time.Nanosecond, Batch: 100, Now: func() time.Time { return now.Add(time.Hour) }}
	if st, err := s.Prune(context.Background(), all); err != nil || st.Deleted != 4 {
		t.Fatalf("%+v %v", st, err)
	}
	recordAll(t, s, bigRecord("r11", now))
	s.Close()
	if rep := verifyDir(t, dir); !rep.OK() || rep.Verified != 1 || rep.Checkpoint.LastID != "r10" {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}

	// An auditor's copy of the public key (warden verify --pubkey): the
	// right key verifies, another key does not.
	own, err := readSignKey(dir)
	if err != nil || own == nil {
		t.Fatalf("sign key: %v", err)
	}
	other, _, _ := ed25519.GenerateKey(nil)
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := ro.VerifyWithKey(context.Background(), own.Public().(ed25519.PublicKey)); err != nil || !rep.OK() {
		t.Fatalf("the directory's own key: %v %+v", err, rep)
	}
	if rep, err := ro.VerifyWithKey(context.Background(), other); err != nil || rep.OK() || rep.Broken.Reason != BrokenCheckpoint {
		t.Fatalf("another key: %v %+v", err, rep)
	}
	ro.Close()

	db := rawDB(t, dir)
	// A forged checkpoint (its hash changed to hide a deletion) fails.
	sqlExec(t, db, `UPDATE trace_checkpoints SET last_hash = ? WHERE rowid = (SELECT max(rowid) FROM trace_checkpoints)`, hex.EncodeToString(make([]byte, 32)))
	if rep := verifyDir(t, dir); rep.OK() || rep.Broken.Reason != BrokenCheckpoint {
		t.Fatalf("forged: %+v %+v", rep, rep.Broken)
	}
}

func TestVerifyTwoWriters(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, Options{})
	b := open(t, dir, Options{})
	var wg sync.WaitGroup
	for w, s := range []*Store{a, b} {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					if err := s.Record(context.Background(), testRecord(fmt.Sprintf("w%d-%d-%d", w, g, i), time.Now())); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	a.Close()
	b.Close()
	if rep := verifyDir(t, dir); !rep.OK() || rep.Verified != 200 {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}
