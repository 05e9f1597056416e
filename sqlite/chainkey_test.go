package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/tracehash"
)

// TestMain gives the package's tests a chain key of their own
// (WARDEN_TRACE_KEY_FILE), not the user's in ~/.config/warden; a test's
// child process (kill -9 tests) inherits it.
func TestMain(m *testing.M) {
	if os.Getenv(tracehash.KeyEnv) != "" { // a child process of a test: its parent's key
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "warden-sqlite-key")
	if err != nil {
		panic(err)
	}
	os.Setenv(tracehash.KeyEnv, filepath.Join(dir, tracehash.KeyFileName))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func verifyDirWith(t *testing.T, dir string, o VerifyOptions) *VerifyReport {
	t.Helper()
	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.VerifyWith(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestChainKeyMarkerAttacks: the editor who also edits the marker (or
// removes it) does not get an ok from a verify with the key; without the
// key verify says it checked the linkage only.
func TestChainKeyMarkerAttacks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   []string
		rehash bool
		reason string
	}{
		{"blanked, legacy raised", []string{`UPDATE runs SET hash = x'', prev_hash = x''`, `UPDATE trace_chain SET legacy = 7`}, false, BrokenMarker},
		{"blanked, marker removed", []string{`UPDATE runs SET hash = x'', prev_hash = x''`, `DELETE FROM trace_chain`}, false, BrokenMarker},
		{"rehashed, marker removed", []string{`UPDATE runs SET decision = 'allow' WHERE id = 'deny'`, `DELETE FROM trace_chain`}, true, BrokenMarker},
		{"rehashed, anchor moved", []string{`UPDATE runs SET decision = 'allow' WHERE id = 'deny'`, `UPDATE trace_chain SET anchor_pos = 7`}, true, BrokenMarker},
		{"rehashed, key id blanked", []string{`UPDATE runs SET decision = 'allow' WHERE id = 'deny'`, `UPDATE trace_chain SET key_id = '', mac = x''`}, true, BrokenMarker},
		{"rehashed", []string{`UPDATE runs SET decision = 'allow' WHERE id = 'deny'`}, true, BrokenEdited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := attackTrace(t)
			for _, q := range tc.edit {
				sqlExec(t, rawDB(t, dir), q)
			}
			if tc.rehash {
				rehashV1(t, dir)
				if strings.Contains(tc.name, "anchor moved") {
					var h []byte
					if err := rawDB(t, dir).QueryRow(`SELECT hash FROM runs WHERE rowid = 7`).Scan(&h); err != nil {
						t.Fatal(err)
					}
					sqlExec(t, rawDB(t, dir), `UPDATE trace_chain SET anchor_hash = ?`, h)
				}
			}
			rep := verifyDir(t, dir)
			if rep.OK() || rep.Broken.Reason != tc.reason {
				t.Fatalf("with the key: want %s, got %+v %+v", tc.reason, rep, rep.Broken)
			}
			t.Logf("with the key: %s: %s", rep.Broken.Reason, rep.Broken.Detail)
			rep = verifyDirWith(t, dir, VerifyOptions{NoKey: true})
			if rep.KeyChecked {
				t.Fatalf("without the key: %+v", rep)
			}
			t.Logf("without the key: ok %v, %+v", rep.OK(), rep.Broken)
		})
	}
}

// TestChainKeyOtherKey: a trace keyed with one key neither opens for
// writing with another nor verifies with it.
func TestChainKeyOtherKey(t *testing.T) {
	dir := attackTrace(t)
	other := make([]byte, tracehash.KeySize)
	other[0] = 1
	if _, err := Open(dir, Options{ChainKey: other}); err == nil || !strings.Contains(err.Error(), "not with the key given") {
		t.Fatalf("Open with another chain key: %v", err)
	}
	rep := verifyDirWith(t, dir, VerifyOptions{Key: other})
	if rep.OK() || rep.Broken.Reason != BrokenMarker {
		t.Fatalf("verify with another key: %+v %+v", rep, rep.Broken)
	}
	rep = verifyDirWith(t, dir, VerifyOptions{NoKey: true})
	if !rep.OK() || rep.KeyChecked || rep.Keyed != 7 || rep.ChainKey == "" {
		t.Fatalf("verify without a key: %+v %+v", rep, rep.Broken)
	}
	rep = verifyDir(t, dir)
	if !rep.OK() || !rep.KeyChecked || rep.Keyed != 7 || rep.BeforeKey != 0 {
		t.Fatalf("verify with the key: %+v %+v", rep, rep.Broken)
	}
}

// TestChainKeyUpgrade: a trace from before the chain key (unkeyed v1
// hashes, no marker) is anchored at its head by the next Open; its
// records stay verifiable (unkeyed), the new ones are keyed, and the old
// ones cannot be passed off for new ones or edited under the keyed ones.
func TestChainKeyUpgrade(t *testing.T) {
	dir := attackTrace(t)
	rehashV1(t, dir)
	sqlExec(t, rawDB(t, dir), `DELETE FROM trace_chain`)
	s := open(t, dir, Options{})
	recordAll(t, s, testRecord("new1", time.Now()), testRecord("new2", time.Now()))
	s.Close()
	rep := verifyDir(t, dir)
	if !rep.OK() || rep.BeforeKey != 7 || rep.Keyed != 2 || !rep.KeyChecked {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
	// Editing a record from before the key and rehashing them breaks the
	// first keyed record's link.
	sqlExec(t, rawDB(t, dir), `UPDATE runs SET decision = 'allow' WHERE id = 'deny'`)
	rehashV1(t, dir)
	rep = verifyDir(t, dir)
	if rep.OK() {
		t.Fatalf("edited before the key: %+v", rep)
	}
	t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)

	// Retention past the anchor: every record left is keyed.
	dir = privateDir(t)
	s = open(t, dir, Options{})
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		recordAll(t, s, testRecord(fmt.Sprintf("old%d", i), t0.Add(time.Duration(i)*time.Hour)))
	}
	s.Close()
	rehashV1(t, dir)
	sqlExec(t, rawDB(t, dir), `DELETE FROM trace_chain`)
	s = open(t, dir, Options{})
	recordAll(t, s, testRecord("new0", t0.Add(10*time.Hour)), testRecord("new1", t0.Add(11*time.Hour)))
	now := t0.Add(13 * time.Hour)
	if st, err := s.Prune(context.Background(), Retention{MaxAge: 2*time.Hour + 30*time.Minute, Now: func() time.Time { return now }}); err != nil || st.Deleted != 5 {
		t.Fatalf("%+v %v", st, err)
	}
	s.Close()
	if rep := verifyDir(t, dir); !rep.OK() || rep.Keyed != 1 || rep.BeforeKey != 0 || rep.Checkpoint == nil {
		t.Fatalf("%+v %+v", rep, rep.Broken)
	}
}
