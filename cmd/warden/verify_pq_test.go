package main

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sigkey"
	"github.com/wardenhq/warden/sqlite"
)

// prunedTrace writes six records to a new data directory and prunes the
// three oldest, the checkpoint signed with key (nil: the directory's
// Ed25519 key).
func prunedTrace(t *testing.T, key *sigkey.PrivateKey) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 6 {
		r := &audit.Record{ID: fmt.Sprintf("r%d", i), Time: t0.Add(time.Duration(i) * time.Hour), Event: "steps/toolCallRequest",
			Surface: "acs", Decision: "allow", Reason: "fine", Input: []byte(`{}`), Results: []warden.Result{}}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(8 * time.Hour)
	ps, err := st.Prune(context.Background(), sqlite.Retention{MaxAge: 5 * time.Hour, Now: func() time.Time { return now }, SigningKey: key})
	if err != nil || ps.Deleted != 3 {
		t.Fatalf("prune: %+v %v", ps, err)
	}
	return dir
}

// TestVerifyPubkeyPQ: `warden verify --pubkey` with the .pub of `warden
// keys new` checks ML-DSA-65-signed checkpoints with the public key alone,
// and names a forged checkpoint (an edited field, or one re-signed by
// another key) with exit 1. The hex Ed25519 key still works.
func TestVerifyPubkeyPQ(t *testing.T) {
	keys := t.TempDir()
	for _, name := range []string{"warden", "intruder"} {
		if code, _, errs := cli(t, "", "keys", "new", "--out", filepath.Join(keys, name)); code != exitOK {
			t.Fatal(errs)
		}
	}
	key, err := sigkey.LoadPrivateKey(filepath.Join(keys, "warden"))
	if err != nil {
		t.Fatal(err)
	}
	intruder, _ := sigkey.LoadPrivateKey(filepath.Join(keys, "intruder"))
	pub := filepath.Join(keys, "warden.pub")
	dir := prunedTrace(t, key)

	code, out, errs := cli(t, "", "verify", "--data", dir, "--pubkey", pub)
	if code != exitOK || !strings.Contains(out, "signed by ML-DSA-65 key "+key.KeyID()) || !strings.Contains(out, "ok: 3 records verified") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir, "--pubkey", filepath.Join(keys, "intruder.pub"))
	if code != exitError || !strings.Contains(out, "BROKEN: the newest checkpoint (after record r2, rowid 3)") || !strings.Contains(out, "not by the key given") {
		t.Fatalf("another key: exit %d: %s", code, out)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cp sqlite.Checkpoint
	if err := db.QueryRow(`SELECT time, last_rowid, last_id, last_hash, deleted, algorithm, signature FROM trace_checkpoints`).Scan(
		&cp.Time, &cp.LastRowID, &cp.LastID, &cp.LastHash, &cp.Deleted, &cp.Algorithm, &cp.Signature); err != nil {
		t.Fatal(err)
	}
	good := cp.Signature
	forged := hex.EncodeToString(make([]byte, 32))
	// Re-signing by the intruder: the message format is documented
	// (docs/verify.md), so a forger can compute it.
	msg := []byte("warden.checkpoint.v2")
	msg = appendU64(msg, uint64(len(cp.Algorithm)))
	msg = append(msg, cp.Algorithm...)
	msg = appendU64(msg, uint64(cp.Time))
	msg = appendU64(msg, uint64(cp.LastRowID))
	msg = appendU64(msg, uint64(len(cp.LastID)))
	msg = append(msg, cp.LastID...)
	msg = appendU64(msg, uint64(len(forged)))
	msg = append(msg, forged...)
	msg = appendU64(msg, uint64(cp.Deleted))
	resigned, err := intruder.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, q string
		args    []any
		want    string
	}{
		{"edited field", `UPDATE trace_checkpoints SET last_hash = ?`, []any{forged}, "its signature does not verify: the checkpoint was forged or changed"},
		{"re-signed by another key", `UPDATE trace_checkpoints SET last_hash = ?, public_key = ?, signature = ?`,
			[]any{forged, hex.EncodeToString(intruder.Public().Bytes()), hex.EncodeToString(resigned)}, "it is signed by ml-dsa-65 key " + intruder.KeyID() + ", not by the key given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.Exec(tc.q, tc.args...); err != nil {
				t.Fatal(err)
			}
			code, out, _ := cli(t, "", "verify", "--data", dir, "--pubkey", pub)
			if code != exitError || !strings.Contains(out, "BROKEN: the newest checkpoint (after record r2, rowid 3)") || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d: %s", code, out)
			}
			if _, err := db.Exec(`UPDATE trace_checkpoints SET last_hash = ?, public_key = ?, signature = ?`,
				cp.LastHash, hex.EncodeToString(key.Public().Bytes()), good); err != nil {
				t.Fatal(err)
			}
		})
	}
	if code, out, _ := cli(t, "", "verify", "--data", dir, "--pubkey", pub); code != exitOK {
		t.Fatalf("restored: exit %d: %s", code, out)
	}

	// The Ed25519 key of an older data directory, in hex, still works.
	edDir := prunedTrace(t, nil)
	seed, err := os.ReadFile(filepath.Join(edDir, sqlite.SignKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	edPub := writeFile(t, keys, "ed.hex", hex.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))+"\n")
	if code, out, errs := cli(t, "", "verify", "--data", edDir, "--pubkey", edPub); code != exitOK {
		t.Fatalf("ed25519: exit %d: %s %s", code, out, errs)
	}
	if code, out, _ := cli(t, "", "verify", "--data", edDir, "--pubkey", pub); code != exitError || !strings.Contains(out, "not by the key given") {
		t.Fatalf("ed25519 trace, ML-DSA key: exit %d: %s", code, out)
	}

	// Bad --pubkey files: one line on stderr, exit 1.
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(keys, "none.pub"), "no such file or directory"},
		{filepath.Join(keys, "warden"), "a PEM block, not a public key"},
		{writeFile(t, keys, "bad.pub", "ml-dsa-65:AAAA\n"), "is 1952 bytes, not 3"},
		{writeFile(t, keys, "junk.pub", "hello\n"), "not a public key"},
	} {
		code, out, errs := cli(t, "", "verify", "--data", dir, "--pubkey", tc.file)
		if code != exitError || out != "" || !strings.Contains(errs, "--pubkey: ") || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, out %q, err %q (want %q)", tc.file, code, out, errs, tc.want)
		}
	}
}

func appendU64(b []byte, v uint64) []byte {
	return append(b, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
