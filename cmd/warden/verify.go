package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wardenhq/warden/sqlite"
)

// cmdVerify walks the trace's hash chain (docs/verify.md): exit 0 when it
// holds, 1 at the first broken link (or a trace it cannot read).
func cmdVerify(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("verify", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	out := fs.String("o", "text", "output: text or json")
	pubFile := fs.String("pubkey", "", "a file holding the hex Ed25519 public key the retention checkpoints must be signed by (as `warden verify` prints it); default: the data directory's own key")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var pub ed25519.PublicKey
	if *pubFile != "" {
		b, err := os.ReadFile(*pubFile)
		if err != nil {
			return fail(stderr, "--pubkey: %v", err)
		}
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(k) != ed25519.PublicKeySize {
			return fail(stderr, "--pubkey: %s does not hold a hex Ed25519 public key (%d hex digits)", *pubFile, 2*ed25519.PublicKeySize)
		}
		pub = k
	}
	if *out != "text" && *out != "json" {
		return fail(stderr, "-o: expected text or json, got %q", *out)
	}
	store, err := sqlite.OpenReadOnly(*data)
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	defer store.Close()
	ctx, cancel := interrupted()
	defer cancel()
	rep, err := store.VerifyWithKey(ctx, pub)
	if err != nil {
		return fail(stderr, "verifying the trace in %s: %v", *data, err)
	}
	if *out == "json" {
		b, _ := json.MarshalIndent(struct {
			OK bool `json:"ok"`
			*sqlite.VerifyReport
		}{rep.OK(), rep}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printVerify(stdout, rep)
	}
	if !rep.OK() {
		return exitError
	}
	return exitOK
}

func printVerify(w io.Writer, rep *sqlite.VerifyReport) {
	if cp := rep.Checkpoint; cp != nil && (rep.Broken == nil || rep.Broken.Reason != sqlite.BrokenCheckpoint) {
		fmt.Fprintf(w, "checkpoint: retention deleted the records up to %s (rowid %d); signed by %s\n", cp.LastID, cp.LastRowID, cp.PublicKey)
	}
	if rep.Legacy > 0 {
		fmt.Fprintf(w, "skipped %d records from before the hash chain (no hash)\n", rep.Legacy)
	}
	if b := rep.Broken; b != nil {
		if b.Reason == sqlite.BrokenCheckpoint {
			fmt.Fprintf(w, "BROKEN: the newest checkpoint (after record %s, rowid %d): %s\n", b.ID, b.RowID, b.Detail)
			return
		}
		fmt.Fprintf(w, "BROKEN at record %s (position %d, rowid %d): %s: %s\n%d records verified before it\n",
			b.ID, b.Position, b.RowID, b.Reason, b.Detail, rep.Verified)
		return
	}
	head := rep.Head
	if head == "" {
		head = "(none)"
	}
	fmt.Fprintf(w, "ok: %d records verified, head %s\n", rep.Verified, head)
}
