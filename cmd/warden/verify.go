package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/wardenhq/warden/internal/tracehash"
	"github.com/wardenhq/warden/postgres"
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
	keyFile := fs.String("chain-key", "", "the trace's chain key, to authenticate the records with (`FILE`, or none to check their linkage only); default: $"+tracehash.KeyEnv+", else "+defaultKeyHelp())
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
	var ko sqlite.VerifyOptions
	switch *keyFile {
	case "":
	case "none":
		ko.NoKey = true
	default:
		k, err := tracehash.ReadKey(*keyFile)
		if err == nil && k == nil {
			err = fmt.Errorf("%s: no such file", *keyFile)
		}
		if err != nil {
			return fail(stderr, "--chain-key: %v", err)
		}
		ko.Key = k
	}
	if *storeURL != "" {
		if pub != nil {
			return fail(stderr, "--pubkey: not with --store (the PostgreSQL trace has no retention checkpoints)")
		}
		return verifyPostgres(*storeURL, *out, postgres.VerifyOptions{Key: ko.Key, NoKey: ko.NoKey}, stdout, stderr)
	}
	store, err := sqlite.OpenReadOnly(*data)
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	defer store.Close()
	ctx, cancel := interrupted()
	defer cancel()
	ko.Pub = pub
	rep, err := store.VerifyWith(ctx, ko)
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
		if b.Reason == sqlite.BrokenMarker || b.Reason == sqlite.BrokenApproval {
			fmt.Fprintf(w, "BROKEN: %s: %s\n", b.Reason, b.Detail)
			return
		}
		fmt.Fprintf(w, "BROKEN at record %s (position %d, rowid %d): %s: %s\n%d records verified before it\n",
			b.ID, b.Position, b.RowID, b.Reason, b.Detail, rep.Verified)
		return
	}
	printProof(w, proof{rep.Verified, rep.BeforeKey, rep.Keyed, rep.ChainKey, rep.KeyChecked,
		rep.Approvals, rep.ApprovalsUnchecked, rep.Head})
}

// proof is what a verify that found no broken link proved, of either
// store.
type proof struct {
	verified, beforeKey, keyed int64
	chainKey                   string
	keyChecked                 bool
	approvals, unchecked       int64
	head                       string
}

// printProof says what the chain proves (docs/verify.md): with the key,
// that nobody without it changed a keyed record; without it, only that
// the records link up.
func printProof(w io.Writer, p proof) {
	head := p.head
	if head == "" {
		head = "(none)"
	}
	if p.keyed > 0 && !p.keyChecked {
		fmt.Fprintf(w, "linkage ok: %d records link up, head %s\n", p.verified, head)
		fmt.Fprintf(w, "NOT AUTHENTICATED: %d records are keyed with chain key %s, which this verify does not have (--chain-key, $%s): their contents were not checked, and an editor who recomputes every hash passes\n",
			p.keyed, p.chainKey, tracehash.KeyEnv)
	} else {
		fmt.Fprintf(w, "ok: %d records verified, head %s\n", p.verified, head)
		if p.keyed > 0 {
			fmt.Fprintf(w, "keyed: %d records authenticated with chain key %s: nobody without the key can change one, or recompute the chain\n", p.keyed, p.chainKey)
		}
	}
	if p.beforeKey > 0 {
		fmt.Fprintf(w, "unkeyed: %d records from before the chain key (SHA-256 only): an editor who recomputes their hashes passes\n", p.beforeKey)
	}
	if p.approvals > 0 || p.unchecked > 0 {
		fmt.Fprintf(w, "approvals: %d match the trace's records (state, approver, use)", p.approvals)
		if p.unchecked > 0 {
			fmt.Fprintf(w, "; %d not checked: retention deleted their records", p.unchecked)
		}
		fmt.Fprintln(w)
	}
}

// defaultKeyHelp names the default chain key file for --help.
func defaultKeyHelp() string {
	if f, err := tracehash.DefaultKeyFile(); err == nil && os.Getenv(tracehash.KeyEnv) == "" {
		return f
	}
	return "$XDG_CONFIG_HOME/warden/" + tracehash.KeyFileName
}

// verifyPostgres is `warden verify --store URL`: exit 0 when the chain
// holds, 1 naming the first broken record.
func verifyPostgres(url, format string, o postgres.VerifyOptions, stdout, stderr io.Writer) int {
	st, _, err := openReadTrace(url, "")
	if err != nil {
		return fail(stderr, "%v", err)
	}
	s := st.(*postgres.Store)
	defer s.Close()
	ctx, cancel := interrupted()
	defer cancel()
	rep, err := s.VerifyWith(ctx, o)
	if err != nil {
		return fail(stderr, "verifying the trace in PostgreSQL: %v", err)
	}
	switch b := rep.Broken; {
	case format == "json":
		j, _ := json.MarshalIndent(struct {
			OK bool `json:"ok"`
			*postgres.VerifyReport
		}{rep.OK(), rep}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", j)
	case b != nil && b.Seq == 0 && b.Position == 0:
		fmt.Fprintf(stdout, "BROKEN: %s: %s\n", b.Reason, b.Detail)
	case b != nil:
		fmt.Fprintf(stdout, "BROKEN at record %s (position %d, seq %d): %s: %s\n%d records verified before it\n",
			b.ID, b.Position, b.Seq, b.Reason, b.Detail, rep.Verified)
	default:
		printProof(stdout, proof{rep.Verified, rep.BeforeKey, rep.Keyed, rep.ChainKey, rep.KeyChecked,
			rep.Approvals, rep.ApprovalsUnchecked, rep.Head})
	}
	if !rep.OK() {
		return exitError
	}
	return exitOK
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
