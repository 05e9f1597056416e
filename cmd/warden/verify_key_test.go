package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

// keyedTrace records five records (the third a deny) in a new trace under
// the chain key in a file of the test's own ($WARDEN_TRACE_KEY_FILE).
func keyedTrace(t *testing.T) string {
	t.Helper()
	t.Setenv("WARDEN_TRACE_KEY_FILE", filepath.Join(t.TempDir(), "trace.chain.key"))
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := &audit.Record{ID: fmt.Sprintf("r%d", i), Time: time.Unix(int64(1000+i), 0), Event: "steps/toolCallRequest",
			Surface: "aos", Decision: "allow", Reason: "fine", Input: json.RawMessage(`{}`), Results: []warden.Result{}}
		if i == 2 {
			r.Decision = "deny"
		}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	return dir
}

// TestVerifyChainKey: verify says what it proved: with the chain key, that
// the records are authentic; with --chain-key none, only their linkage;
// with another key, that the trace is not keyed with it (exit 1).
func TestVerifyChainKey(t *testing.T) {
	dir := keyedTrace(t)
	code, out, errOut := cli(t, "", "verify", "--data", dir)
	if code != exitOK || !strings.HasPrefix(out, "ok: 5 records verified, head ") || !strings.Contains(out, "keyed: 5 records authenticated with chain key ") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir, "--chain-key", "none")
	if code != exitOK || !strings.HasPrefix(out, "linkage ok: 5 records link up") || !strings.Contains(out, "NOT AUTHENTICATED") {
		t.Fatalf("--chain-key none: exit %d: %s", code, out)
	}
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir, "--chain-key", other)
	if code != exitError || !strings.Contains(out, "BROKEN: marker: the trace is keyed with chain key ") {
		t.Fatalf("another key: exit %d: %s", code, out)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir, "-o", "json")
	var rep struct {
		OK         bool   `json:"ok"`
		Keyed      int64  `json:"keyed"`
		KeyChecked bool   `json:"key_checked"`
		ChainKey   string `json:"chain_key"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Keyed != 5 || !rep.KeyChecked || rep.ChainKey == "" {
		t.Fatalf("-o json: exit %d: %s", code, out)
	}
	if code, _, errOut := cli(t, "", "verify", "--data", dir, "--chain-key", filepath.Join(dir, "nope")); code != exitError || !strings.Contains(errOut, "--chain-key") {
		t.Fatalf("a missing key file: exit %d: %s", code, errOut)
	}
}

// TestAttackVerifyCLIBlankedHashes: `warden verify` on a trace whose
// hashes were all blanked exits 1 (it said "skipped 5 records from before
// the hash chain", ok).
func TestAttackVerifyCLIBlankedHashes(t *testing.T) {
	dir := keyedTrace(t)
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET hash = x'', prev_hash = x''`); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{}, {"--chain-key", "none"}} {
		code, out, _ := cli(t, "", append([]string{"verify", "--data", dir}, args...)...)
		if code != exitError || !strings.Contains(out, "BROKEN at record r0") {
			t.Fatalf("verify %v: exit %d: %s", args, code, out)
		}
	}
}
