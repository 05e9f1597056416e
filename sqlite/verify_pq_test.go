package sqlite

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sigkey"
)

// TestVerifyCheckpointPQ: with Retention.SigningKey the checkpoints are
// signed with ML-DSA-65 (or SLH-DSA-128s), the data directory's Ed25519
// key is neither created nor needed, and the public key alone verifies
// them; an edited checkpoint, one re-signed by another key, and one
// claiming another algorithm are each detected.
func TestVerifyCheckpointPQ(t *testing.T) {
	for _, alg := range sigkey.SigningAlgs {
		t.Run(string(alg), func(t *testing.T) {
			if alg == sigkey.SLHDSA128s && testing.Short() {
				t.Skip("SLH-DSA-128s signing is slow")
			}
			key, err := sigkey.Generate(alg, nil)
			if err != nil {
				t.Fatal(err)
			}
			other, _ := sigkey.Generate(alg, nil)
			dir := privateDir(t)
			s := open(t, dir, Options{})
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for i := range 6 {
				recordAll(t, s, bigRecord(fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Hour)))
			}
			now := t0.Add(8 * time.Hour)
			r := Retention{MaxAge: 5 * time.Hour, Batch: 100, Now: func() time.Time { return now }, SigningKey: key}
			if st, err := s.Prune(context.Background(), r); err != nil || st.Deleted != 3 {
				t.Fatalf("%+v %v", st, err)
			}
			s.Close()
			if _, err := os.Stat(filepath.Join(dir, SignKeyFile)); !os.IsNotExist(err) {
				t.Errorf("%s was created though a signing key is configured (%v)", SignKeyFile, err)
			}
			verify := func(want *sigkey.PublicKey) *VerifyReport {
				t.Helper()
				ro, err := OpenReadOnly(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer ro.Close()
				rep, err := ro.VerifyWithPublicKey(context.Background(), want)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			rep := verify(key.Public())
			if !rep.OK() || rep.Verified != 3 || rep.Checkpoint == nil || rep.Checkpoint.Algorithm != string(alg) || rep.Checkpoint.LastID != "r2" {
				t.Fatalf("%+v %+v %+v", rep, rep.Broken, rep.Checkpoint)
			}
			if rep := verify(nil); !rep.OK() {
				t.Fatalf("without a key: %+v", rep.Broken)
			}
			if rep := verify(other.Public()); rep.OK() || rep.Broken.Reason != BrokenCheckpoint || !strings.Contains(rep.Broken.Detail, "not by the key given") {
				t.Fatalf("another key: %+v", rep.Broken)
			}
			edPub, _, _ := ed25519.GenerateKey(nil)
			edKey, _ := sigkey.NewPublicKey(sigkey.Ed25519, edPub)
			if rep := verify(edKey); rep.OK() || rep.Broken.Reason != BrokenCheckpoint {
				t.Fatalf("an Ed25519 key: %+v", rep.Broken)
			}

			db := rawDB(t, dir)
			var good struct{ hash, pub, sig string }
			if err := db.QueryRow(`SELECT last_hash, public_key, signature FROM trace_checkpoints`).Scan(&good.hash, &good.pub, &good.sig); err != nil {
				t.Fatal(err)
			}
			restore := func() {
				sqlExec(t, db, `UPDATE trace_checkpoints SET last_hash = ?, public_key = ?, signature = ?, algorithm = ?`, good.hash, good.pub, good.sig, string(alg))
			}
			// Re-signed by another key, with that key's public key: the
			// signature holds, the key given does not match.
			cp := rep.Checkpoint
			cp.LastHash = hex.EncodeToString(make([]byte, 32))
			sig, _ := other.Sign(checkpointMessage(cp))
			for _, tc := range []struct {
				name, q string
				args    []any
				want    string
			}{
				{"edited field", `UPDATE trace_checkpoints SET last_hash = ?`, []any{cp.LastHash}, "does not verify"},
				// The first byte changed (a fixed "00" left a signature that
				// began with 00, one in 256, as it was: the test failed).
				{"edited signature", `UPDATE trace_checkpoints SET signature = ?`, []any{map[bool]string{true: "01", false: "00"}[good.sig[:2] == "00"] + good.sig[2:]}, "does not verify"},
				{"re-signed by another key", `UPDATE trace_checkpoints SET last_hash = ?, public_key = ?, signature = ?`,
					[]any{cp.LastHash, hex.EncodeToString(other.Public().Bytes()), hex.EncodeToString(sig)}, "not by the key given"},
				{"algorithm changed", `UPDATE trace_checkpoints SET algorithm = 'ed25519'`, nil, ""}, // malformed, or (SLH-DSA: 32 bytes) not verifying
				{"unknown algorithm", `UPDATE trace_checkpoints SET algorithm = 'rsa'`, nil, `algorithm "rsa"`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					defer restore()
					sqlExec(t, db, tc.q, tc.args...)
					rep := verify(key.Public())
					if rep.OK() || rep.Broken.Reason != BrokenCheckpoint || !strings.Contains(rep.Broken.Detail, tc.want) {
						t.Fatalf("%+v", rep.Broken)
					}
				})
			}
			if rep := verify(key.Public()); !rep.OK() {
				t.Fatalf("restored: %+v", rep.Broken)
			}
		})
	}
}

// TestCheckpointMessageVersions: an Ed25519 checkpoint signs the v1
// message (unchanged, so older checkpoints verify), any other algorithm
// the v2 message naming it.
func TestCheckpointMessageVersions(t *testing.T) {
	cp := &Checkpoint{Time: 1, LastRowID: 2, LastID: "x", LastHash: "ab", Deleted: 3}
	v1 := checkpointMessage(cp)
	cp.Algorithm = "ed25519"
	if string(checkpointMessage(cp)) != string(v1) || !strings.HasPrefix(string(v1), "warden.checkpoint.v1") {
		t.Error("ed25519 checkpoints must sign the v1 message")
	}
	cp.Algorithm = "ml-dsa-65"
	if m := string(checkpointMessage(cp)); !strings.HasPrefix(m, "warden.checkpoint.v2") || !strings.Contains(m, "ml-dsa-65") {
		t.Errorf("v2 message %q", m)
	}
}
