package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/internal/tracehash"
)

// TestMain gives the package's tests a chain key of their own
// (WARDEN_TRACE_KEY_FILE), not the user's in ~/.config/warden; a test's
// child process inherits it.
func TestMain(m *testing.M) {
	if os.Getenv(tracehash.KeyEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "warden-postgres-key")
	if err != nil {
		panic(err)
	}
	os.Setenv(tracehash.KeyEnv, filepath.Join(dir, tracehash.KeyFileName))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestChainKeyMarkerAttacks: the editor who also removes or edits the
// marker gets no ok from a verify with the key; another key neither
// opens the database for writing nor verifies it; without the key verify
// checks the linkage only and says so.
func TestChainKeyMarkerAttacks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, edit string }{
		{"marker removed", `DELETE FROM trace_chain`},
		{"anchor moved", `UPDATE trace_chain SET anchor_pos = 7`},
		{"key id blanked", `UPDATE trace_chain SET key_id = '', mac = '\x'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := attackStore(t)
			pgExec(t, url, `UPDATE runs SET decision = 'allow' WHERE id = 'deny'`)
			rehashV1(t, url)
			pgExec(t, url, tc.edit)
			rep, err := s.Verify(ctx)
			if err != nil || rep.OK() || rep.Broken.Reason != BrokenMarker {
				t.Fatalf("%+v %+v %v", rep, rep.Broken, err)
			}
			t.Logf("%s: %s", rep.Broken.Reason, rep.Broken.Detail)
			if rep, err = s.VerifyWith(ctx, VerifyOptions{NoKey: true}); err != nil || rep.KeyChecked {
				t.Fatalf("without the key: %+v %v", rep, err)
			}
		})
	}
	s, url := attackStore(t)
	other := make([]byte, tracehash.KeySize)
	if _, err := Open(ctx, url, Options{ChainKey: other}); err == nil || !strings.Contains(err.Error(), "not with the key given") {
		t.Fatalf("Open with another key: %v", err)
	}
	if rep, err := s.VerifyWith(ctx, VerifyOptions{Key: other}); err != nil || rep.OK() || rep.Broken.Reason != BrokenMarker {
		t.Fatalf("verify with another key: %+v %v", rep, err)
	}
	rep, err := s.VerifyWith(ctx, VerifyOptions{NoKey: true})
	if err != nil || !rep.OK() || rep.KeyChecked || rep.Keyed != 7 {
		t.Fatalf("verify without a key: %+v %v", rep, err)
	}
	rep, err = s.Verify(ctx)
	if err != nil || !rep.OK() || !rep.KeyChecked || rep.Keyed != 7 {
		t.Fatalf("verify with the key: %+v %v", rep, err)
	}
}

// TestChainKeyUpgrade: a database written before the chain key (v1
// hashes, no marker) is anchored at its head by the next Open; its records
// verify unkeyed, the new ones keyed.
func TestChainKeyUpgrade(t *testing.T) {
	ctx := context.Background()
	s, url := attackStore(t)
	s.Close()
	rehashV1(t, url)
	pgExec(t, url, `DELETE FROM trace_chain`)
	s = openTest(t, url, Options{})
	for _, id := range []string{"new1", "new2"} {
		if err := s.Record(ctx, &audit.Record{ID: id, Time: time.Now(), Event: "e", Surface: "aos", Decision: "allow"}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.BeforeKey != 7 || rep.Keyed != 2 || !rep.KeyChecked {
		t.Fatalf("%+v %v", rep, err)
	}
	pgExec(t, url, `UPDATE runs SET decision = 'allow' WHERE id = 'deny'`)
	rehashV1(t, url)
	if rep, err = s.Verify(ctx); err != nil || rep.OK() {
		t.Fatalf("edited before the key: %+v %v", rep, err)
	}
	t.Logf("%s at %s: %s", rep.Broken.Reason, rep.Broken.ID, rep.Broken.Detail)
}
