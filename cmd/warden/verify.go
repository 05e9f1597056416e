package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/wardenhq/warden/sigkey"
	"github.com/wardenhq/warden/sqlite"
)

// cmdVerify walks the trace's hash chain (docs/verify.md): exit 0 when it
// holds, 1 at the first broken link (or a trace it cannot read).
func cmdVerify(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("verify", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	storeURL := addStoreFlag(fs)
	out := fs.String("o", "text", "output: text or json")
	pubFile := fs.String("pubkey", "", "a file holding the public key the retention checkpoints must be signed by: the .pub of acs.signing_key as `warden keys new` wrote it (ML-DSA-65, SLH-DSA-128s), or the hex Ed25519 key `warden verify` prints; default: the data directory's own key")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var pub *sigkey.PublicKey
	if *pubFile != "" {
		k, err := sigkey.LoadPublicKey(*pubFile)
		if err != nil {
			return fail(stderr, "--pubkey: %v", err)
		}
		pub = k
	}
	if *out != "text" && *out != "json" {
		return fail(stderr, "-o: expected text or json, got %q", *out)
	}
	if *storeURL != "" {
		if pub != nil {
			return fail(stderr, "--pubkey: not with --store (the PostgreSQL trace has no retention checkpoints)")
		}
		return verifyPostgres(*storeURL, *out, stdout, stderr)
	}
	store, err := sqlite.OpenReadOnly(*data)
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	defer store.Close()
	ctx, cancel := interrupted()
	defer cancel()
	rep, err := store.VerifyWithPublicKey(ctx, pub)
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
		fmt.Fprintf(w, "checkpoint: retention deleted the records up to %s (rowid %d); signed by %s\n", cp.LastID, cp.LastRowID, signer(cp))
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

// signer names a checkpoint's key: the hex Ed25519 key (what --pubkey
// takes for it), or an ML-DSA-65 / SLH-DSA-128s key's algorithm and key
// id (as warden keys new printed it).
func signer(cp *sqlite.Checkpoint) string {
	alg, err := sigkey.ParseAlg(cp.Algorithm)
	if err != nil || alg == sigkey.Ed25519 {
		return cp.PublicKey
	}
	raw, err := hex.DecodeString(cp.PublicKey)
	if err != nil {
		return cp.PublicKey
	}
	k, err := sigkey.NewPublicKey(alg, raw)
	if err != nil {
		return cp.PublicKey
	}
	return alg.ACSName() + " key " + k.KeyID()
}
