package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/storetest"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
)

func recordAll(t *testing.T, s *Store, rs ...*audit.Record) {
	t.Helper()
	for _, r := range rs {
		if err := s.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func collectAll(t *testing.T, s *Store) []audit.Record {
	t.Helper()
	got, err := audit.Collect(context.Background(), s, audit.Query{Oldest: true}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func verifyWith(t *testing.T, s *Store, o VerifyOptions) *VerifyReport {
	t.Helper()
	rep, err := s.VerifyWith(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSealedHash: a record without sealed values hashes as before they
// existed (the golden hash), the same record with them hashes otherwise,
// and a trace holding both verifies. A record too big to ride in a scan's
// chunk keeps its sealed values too.
func TestSealedHash(t *testing.T) {
	s := openTest(t, testSchemaURL(t), Options{ChainKey: storetest.GoldenKey})
	sealed := storetest.GoldenRecord("sealed")
	sealed.Sealed = storetest.GoldenSealed
	big := storetest.GoldenRecord("big")
	big.Input = json.RawMessage(`{"to":"[REDACTED:email:e87ea35c]","pad":"` + strings.Repeat("x", 2*inlineBlobs) + `"}`)
	big.Sealed = storetest.GoldenSealed
	recordAll(t, s, storetest.GoldenRecord("golden"), sealed, big)
	got := collectAll(t, s)
	if got[0].Hash != storetest.GoldenHash {
		t.Errorf("a record without sealed values hashes to %s, want %s as before schema 8", got[0].Hash, storetest.GoldenHash)
	}
	if got[0].Sealed != nil || !bytes.Equal(got[1].Sealed, storetest.GoldenSealed) || !bytes.Equal(got[2].Sealed, storetest.GoldenSealed) {
		t.Errorf("Sealed read back %q, %q and %q; want nil, then %q twice", got[0].Sealed, got[1].Sealed, got[2].Sealed, storetest.GoldenSealed)
	}
	rep := verifyWith(t, s, VerifyOptions{Key: storetest.GoldenKey})
	if !rep.OK() || rep.Verified != 3 || rep.Keyed != 3 || rep.Head != got[2].Hash {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
	other := openTest(t, testSchemaURL(t), Options{ChainKey: storetest.GoldenKey})
	recordAll(t, other, sealed)
	if h := collectAll(t, other)[0].Hash; h == storetest.GoldenHash {
		t.Errorf("a record with sealed values hashes as the same record without")
	}
}

// sealedStore records n records one at a time (seq i+1 is record i);
// every third one, from the first, has sealed values.
func sealedStore(t *testing.T, n int) (*Store, string) {
	t.Helper()
	url := testSchemaURL(t)
	s := openTest(t, url, Options{})
	for i := range n {
		r := &audit.Record{ID: fmt.Sprintf("s%03d", i), Time: time.Now(), Event: "steps/toolCallRequest",
			Surface: "aos", Decision: "allow", Input: json.RawMessage(`{"tool":"bash"}`),
			Results: []warden.Result{{Guardian: "policy", Decision: "allow", Mode: "enforce"}}}
		if i%3 == 0 {
			r.Sealed = json.RawMessage(fmt.Sprintf(`{"email:%08x":"AQID%03d-_w"}`, i, i))
		}
		recordAll(t, s, r)
	}
	return s, url
}

// TestVerifySealed: the hash chain covers the stored sealed bytes: a byte
// changed, the value removed or emptied, or a value given to a record that
// had none breaks the chain at that record; so do sealed values given to a
// record from before the chain key, which v1 does not cover.
func TestVerifySealed(t *testing.T) {
	flip := func(t *testing.T, url string, seq int) {
		var b []byte
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(context.Background(), `SELECT sealed FROM runs WHERE seq = $1`, seq).Scan(&b); err != nil || len(b) < 20 {
			t.Fatalf("sealed of seq %d: %q, %v", seq, b, err)
		}
		b[17] ^= 0x01 // inside the envelope
		pgExec(t, url, `UPDATE runs SET sealed = $1 WHERE seq = $2`, b, seq)
	}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, url string)
		pos    int64
	}{
		{"one byte changed", func(t *testing.T, url string) { flip(t, url, 13) }, 13},
		{"one byte changed, first record", func(t *testing.T, url string) { flip(t, url, 1) }, 1},
		{"removed", func(t *testing.T, url string) { pgExec(t, url, `UPDATE runs SET sealed = NULL WHERE seq = 22`) }, 22},
		{"emptied", func(t *testing.T, url string) { pgExec(t, url, `UPDATE runs SET sealed = '\x' WHERE seq = 7`) }, 7},
		{"added", func(t *testing.T, url string) { pgExec(t, url, `UPDATE runs SET sealed = '{}'::bytea WHERE seq = 5`) }, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := sealedStore(t, 30)
			if rep := verifyWith(t, s, VerifyOptions{}); !rep.OK() || rep.Verified != 30 {
				t.Fatalf("the untouched trace: %+v %+v", rep, rep.Broken)
			}
			tc.tamper(t, url)
			rep := verifyWith(t, s, VerifyOptions{})
			if rep.OK() || rep.Broken.Reason != BrokenEdited || rep.Broken.Position != tc.pos || rep.Verified != tc.pos-1 {
				t.Fatalf("want %s at %d, got %+v %+v", BrokenEdited, tc.pos, rep, rep.Broken)
			}
			t.Logf("%s at %d: %s", rep.Broken.Reason, rep.Broken.Position, rep.Broken.Detail)
		})
	}
	t.Run("added before the chain key", func(t *testing.T) {
		s, url := attackStore(t)
		s.Close()
		rehashV1(t, url)
		pgExec(t, url, `DELETE FROM trace_chain`)
		s = openTest(t, url, Options{}) // anchors the chain key after them
		if rep := verifyWith(t, s, VerifyOptions{}); !rep.OK() || rep.BeforeKey != 7 {
			t.Fatalf("the untouched trace: %+v %+v", rep, rep.Broken)
		}
		pgExec(t, url, `UPDATE runs SET sealed = '{}'::bytea WHERE id = 'a3'`)
		rep := verifyWith(t, s, VerifyOptions{})
		if rep.OK() || rep.Broken.Reason != BrokenEdited || rep.Broken.ID != "a3" || !strings.Contains(rep.Broken.Detail, "before the chain key") {
			t.Fatalf("want %s at a3, got %+v %+v", BrokenEdited, rep, rep.Broken)
		}
		t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
	})
}

// TestMigrateSealedColumn upgrades a schema-7 database in place: its
// records read back with no sealed values and still verify (their hashes
// are what schema 7 wrote: the golden hash), new records keep theirs, and
// the chain goes on across the upgrade.
func TestMigrateSealedColumn(t *testing.T) {
	ctx := context.Background()
	url := testSchemaURL(t)
	s := openTest(t, url, Options{ChainKey: storetest.GoldenKey})
	recordAll(t, s, storetest.GoldenRecord("golden"), storetest.GoldenRecord("old2"))
	s.Close()
	// Back to schema 7: the runs table without sealed.
	pgExec(t, url, `ALTER TABLE runs DROP COLUMN sealed`)
	pgExec(t, url, `UPDATE warden_schema SET version = 7`)
	if _, err := Open(ctx, url, Options{ChainKey: storetest.GoldenKey, NoMigrate: true}); err == nil || !strings.Contains(err.Error(), "older") {
		t.Errorf("Open(NoMigrate) of schema 7: %v, want an 'older' error", err)
	}
	s = openTest(t, url, Options{ChainKey: storetest.GoldenKey})
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT version FROM warden_schema`).Scan(&v); err != nil || v != SchemaVersion || v != 8 {
		t.Fatalf("version %d, %v; want 8", v, err)
	}
	nr := storetest.GoldenRecord("new")
	nr.Sealed = storetest.GoldenSealed
	recordAll(t, s, nr, storetest.GoldenRecord("new-unsealed"))
	got := collectAll(t, s)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
		switch {
		case r.ID == "new" && !bytes.Equal(r.Sealed, storetest.GoldenSealed):
			t.Errorf("new record: Sealed %q, want %q", r.Sealed, storetest.GoldenSealed)
		case r.ID != "new" && r.Sealed != nil:
			t.Errorf("record %s: Sealed %q, want nil", r.ID, r.Sealed)
		}
	}
	if strings.Join(ids, ",") != "golden,old2,new,new-unsealed" {
		t.Fatalf("records %q", ids)
	}
	if got[0].Hash != storetest.GoldenHash {
		t.Errorf("the old golden record's hash is %s, want %s", got[0].Hash, storetest.GoldenHash)
	}
	if got[2].PrevHash != got[1].Hash {
		t.Errorf("the first record after the upgrade names %s, not the last one before (%s)", got[2].PrevHash, got[1].Hash)
	}
	if rep := verifyWith(t, s, VerifyOptions{Key: storetest.GoldenKey}); !rep.OK() || rep.Verified != 4 || rep.Keyed != 4 {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}
