package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/storetest"
)

// collectAll returns every record of s, oldest first.
func collectAll(t *testing.T, s *Store) []audit.Record {
	t.Helper()
	got, err := audit.Collect(context.Background(), s, audit.Query{Oldest: true}, everything)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSealedHash: a record without sealed values hashes as before they
// existed (the golden hash), the same record with them hashes otherwise,
// and a trace holding both verifies, with the trace log too.
func TestSealedHash(t *testing.T) {
	for _, opts := range []Options{{ChainKey: storetest.GoldenKey}, {ChainKey: storetest.GoldenKey, Log: true}} {
		t.Run(fmt.Sprintf("log=%v", opts.Log), func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, opts)
			sealed := storetest.GoldenRecord("sealed")
			sealed.Sealed = storetest.GoldenSealed
			recordAll(t, s, storetest.GoldenRecord("golden"), sealed)
			got := collectAll(t, s)
			if got[0].Hash != storetest.GoldenHash {
				t.Errorf("a record without sealed values hashes to %s, want %s as before schema 17", got[0].Hash, storetest.GoldenHash)
			}
			if got[0].Sealed != nil || !bytes.Equal(got[1].Sealed, storetest.GoldenSealed) {
				t.Errorf("Sealed read back %q and %q, want nil and %q", got[0].Sealed, got[1].Sealed, storetest.GoldenSealed)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			rep := verifyDirWith(t, dir, VerifyOptions{Key: storetest.GoldenKey})
			if !rep.OK() || rep.Verified != 2 || rep.Keyed != 2 || rep.Head != got[1].Hash {
				t.Fatalf("%+v %+v", rep, rep.Broken)
			}
			// The same record with its sealed values as the first one.
			other := open(t, t.TempDir(), opts)
			recordAll(t, other, sealed)
			if h := collectAll(t, other)[0].Hash; h == storetest.GoldenHash {
				t.Errorf("a record with sealed values hashes as the same record without")
			}
		})
	}
}

// sealedTrace records n records one at a time (rowid i+1 is record i);
// every third one, from the first, has sealed values.
func sealedTrace(t *testing.T, dir string, n int) {
	t.Helper()
	s := open(t, dir, Options{})
	for i := range n {
		r := testRecord(fmt.Sprintf("s%03d", i), time.Now())
		if i%3 == 0 {
			r.Sealed = json.RawMessage(fmt.Sprintf(`{"email:%08x":"AQID%03d-_w"}`, i, i))
		}
		recordAll(t, s, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifySealed: the hash chain covers the stored sealed bytes: a byte
// changed, the value removed or emptied, or a value given to a record that
// had none breaks the chain at that record; so do sealed values given to a
// record from before the chain key or from before the hash chain, which
// v1 and no hash do not cover.
func TestVerifySealed(t *testing.T) {
	flip := func(t *testing.T, db *sql.DB, rowid int) {
		var b []byte
		if err := db.QueryRow(`SELECT sealed FROM runs WHERE rowid = ?`, rowid).Scan(&b); err != nil || len(b) < 20 {
			t.Fatalf("sealed of rowid %d: %q, %v", rowid, b, err)
		}
		b[17] ^= 0x01 // inside the envelope
		sqlExec(t, db, `UPDATE runs SET sealed = ? WHERE rowid = ?`, b, rowid)
	}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, db *sql.DB)
		pos    int64
	}{
		{"one byte changed", func(t *testing.T, db *sql.DB) { flip(t, db, 13) }, 13},
		{"one byte changed, first record", func(t *testing.T, db *sql.DB) { flip(t, db, 1) }, 1},
		{"removed", func(t *testing.T, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET sealed = NULL WHERE rowid = 22`)
		}, 22},
		{"emptied", func(t *testing.T, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET sealed = x'' WHERE rowid = 7`)
		}, 7},
		{"stored as text", func(t *testing.T, db *sql.DB) { // the same bytes, another type: still them
			sqlExec(t, db, `UPDATE runs SET sealed = CAST(sealed AS TEXT) WHERE rowid = 10`)
		}, 0},
		{"added", func(t *testing.T, db *sql.DB) {
			sqlExec(t, db, `UPDATE runs SET sealed = x'7b7d' WHERE rowid = 5`)
		}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sealedTrace(t, dir, 30)
			if rep := verifyDir(t, dir); !rep.OK() || rep.Verified != 30 {
				t.Fatalf("the untouched trace: %+v %+v", rep, rep.Broken)
			}
			tc.tamper(t, rawDB(t, dir))
			rep := verifyDir(t, dir)
			if tc.pos == 0 {
				if !rep.OK() || rep.Verified != 30 {
					t.Fatalf("want ok, got %+v %+v", rep, rep.Broken)
				}
				return
			}
			if rep.OK() || rep.Broken.Reason != BrokenEdited || rep.Broken.Position != tc.pos || rep.Verified != tc.pos-1 {
				t.Fatalf("want %s at %d, got %+v %+v", BrokenEdited, tc.pos, rep, rep.Broken)
			}
			t.Logf("%s at %d: %s", rep.Broken.Reason, rep.Broken.Position, rep.Broken.Detail)
		})
	}

	// Records from before the chain key (v1 hashes) and from before the
	// hash chain (none) had no sealed values, and nothing covers one
	// given to them.
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, dir string)
		want   string
	}{
		{"before the chain key", func(t *testing.T, dir string) {
			rehashV1(t, dir)
			sqlExec(t, rawDB(t, dir), `DELETE FROM trace_chain`)
		}, "before the chain key"},
		{"before the hash chain", func(t *testing.T, dir string) { makeLegacy(t, dir, `true`) }, "before the hash chain"},
	} {
		t.Run("added "+tc.name, func(t *testing.T) {
			dir := attackTrace(t)
			tc.before(t, dir)
			open(t, dir, Options{}).Close() // anchors the chain key after them
			if rep := verifyDir(t, dir); !rep.OK() {
				t.Fatalf("the untouched trace: %+v %+v", rep, rep.Broken)
			}
			sqlExec(t, rawDB(t, dir), `UPDATE runs SET sealed = x'7b7d' WHERE id = 'a3'`)
			rep := verifyDir(t, dir)
			if rep.OK() || rep.Broken.Reason != BrokenEdited || rep.Broken.ID != "a3" || !strings.Contains(rep.Broken.Detail, tc.want) {
				t.Fatalf("want %s at a3, got %+v %+v", BrokenEdited, rep, rep.Broken)
			}
			t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
		})
	}
}

// TestMigrateSealedColumn upgrades a schema-16 trace in place: its records
// read back with no sealed values and still verify (their hashes are what
// schema 16 wrote: the golden hash), new records keep theirs, and the
// chain goes on across the upgrade.
func TestMigrateSealedColumn(t *testing.T) {
	dir := privateDir(t)
	s := open(t, dir, Options{ChainKey: storetest.GoldenKey})
	recordAll(t, s, storetest.GoldenRecord("golden"), testRecord("old2", time.Now()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to schema 16: the runs table without sealed.
	db := rawDB(t, dir)
	sqlExec(t, db, `ALTER TABLE runs DROP COLUMN sealed`)
	sqlExec(t, db, `PRAGMA user_version = 16`)
	db.Close()
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "older") {
		t.Errorf("OpenReadOnly of schema 16: %v, want an 'older' error", err)
	}

	s = open(t, dir, Options{ChainKey: storetest.GoldenKey})
	var v int
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion || v != 17 {
		t.Fatalf("user_version = %d, %v; want %d", v, err, 17)
	}
	nr := testRecord("new", time.Now())
	nr.Sealed = storetest.GoldenSealed
	recordAll(t, s, nr, testRecord("new-unsealed", time.Now()))
	got := collectAll(t, s)
	if g := idsOf(got); !slices.Equal(g, []string{"golden", "old2", "new", "new-unsealed"}) {
		t.Fatalf("records %q", g)
	}
	if got[0].Hash != storetest.GoldenHash {
		t.Errorf("the old golden record's hash is %s, want %s", got[0].Hash, storetest.GoldenHash)
	}
	for _, r := range got {
		switch {
		case r.ID == "new" && !bytes.Equal(r.Sealed, storetest.GoldenSealed):
			t.Errorf("new record: Sealed %q, want %q", r.Sealed, storetest.GoldenSealed)
		case r.ID != "new" && r.Sealed != nil:
			t.Errorf("record %s: Sealed %q, want nil", r.ID, r.Sealed)
		}
	}
	if got[2].PrevHash != got[1].Hash {
		t.Errorf("the first record after the upgrade names %s, not the last one before (%s)", got[2].PrevHash, got[1].Hash)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := verifyDirWith(t, dir, VerifyOptions{Key: storetest.GoldenKey}); !rep.OK() || rep.Verified != 4 || rep.Keyed != 4 {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}

// TestLoggedBeforeSealed: a trace log entry written before schema 17 (no
// sealed argument: what a crash left in the log of an older warden) is
// read as a record without sealed values; a new entry keeps them.
func TestLoggedBeforeSealed(t *testing.T) {
	for _, sealed := range []json.RawMessage{nil, storetest.GoldenSealed} {
		r := requestPool.Get().(*request)
		rec := storetest.GoldenRecord("logged")
		rec.Sealed = sealed
		if err := r.fill(rec); err != nil {
			t.Fatal(err)
		}
		enc := appendLogged(nil, r)
		q, err := decodeLogged(enc)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := q.args[sealedArg].Value.([]byte); !bytes.Equal(got, sealed) || !bytes.Equal(q.blob, r.blob) || q.content != r.content {
			t.Errorf("round trip of sealed %q: sealed %q, blob equal %v", sealed, got, bytes.Equal(q.blob, r.blob))
		}
		if sealed != nil {
			putRequest(r)
			continue
		}
		// The old encoding: the same without the sealed argument (its nil
		// tag is the byte just before the blob).
		at := len(enc) - len(r.blob) - 1
		if enc[at] != tagNil {
			t.Fatalf("the byte before the blob is %d, not the sealed argument's nil tag", enc[at])
		}
		old := slices.Delete(slices.Clone(enc), at, at+1)
		q, err = decodeLogged(old)
		if err != nil {
			t.Fatalf("an entry from before schema 17: %v", err)
		}
		for i := range q.args {
			if loggedArg(i) && !argEqual(q.args[i].Value, r.args[i].Value) {
				t.Errorf("arg %d = %#v, want %#v", i, q.args[i].Value, r.args[i].Value)
			}
		}
		if !bytes.Equal(q.blob, r.blob) || q.content != r.content {
			t.Errorf("an entry from before schema 17: blob or content differ")
		}
		putRequest(r)
	}
}

// argEqual compares two driver values of a request.
func argEqual(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

// BenchmarkSealed measures what sealed values cost a record (an envelope
// of one redacted value, as the redactor writes it) against the same
// record without: Record one at a time, and reading the 100 newest of
// 10000 records.
//
//	go test -run x -bench Sealed -benchtime 2000x ./sqlite/
func BenchmarkSealed(b *testing.B) {
	for _, with := range []bool{false, true} {
		rec := func(id string) *audit.Record {
			r := benchRecord(id)
			if with {
				r.Sealed = storetest.GoldenSealed
			}
			return r
		}
		name := map[bool]string{false: "none", true: "one"}[with]
		b.Run("record/"+name, func(b *testing.B) {
			s := open(b, b.TempDir(), Options{})
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := s.Record(ctx, rec(fmt.Sprintf("serial-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("scan100/"+name, func(b *testing.B) {
			s := open(b, b.TempDir(), Options{})
			ctx := context.Background()
			errs := make(chan error, 10000)
			for i := range 10000 {
				go func() { errs <- s.Record(ctx, rec(fmt.Sprintf("runs-%d", i))) }()
			}
			for range 10000 {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				got, err := audit.Collect(ctx, s, audit.Query{}, 100)
				if err != nil || len(got) != 100 || (with && got[0].Sealed == nil) {
					b.Fatalf("%d records, %v", len(got), err)
				}
			}
		})
	}
}
