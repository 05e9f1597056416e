package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/sigkey"
)

// keysUsage is `warden keys`' usage line.
const keysUsage = "keys new [--alg ml-dsa-65|slh-dsa-128s] [--out PREFIX] [--force] | keys rotate (--new-kek-file PATH | --new-kek-env NAME) [--old-kek-file PATH | --old-kek-env NAME] [--data DIR | --store postgres://…] [--config F]"

// cmdKeys is `warden keys new` (keysNew) and `warden keys rotate`
// (keysRotate).
func cmdKeys(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "new":
			return keysNew(args[1:], stdin, stdout, stderr)
		case "rotate":
			return keysRotate(args[1:], stdin, stdout, stderr)
		case "-h", "--help", "help":
			fmt.Fprintf(stdout, "Usage: warden %s\n", keysUsage)
			return exitOK
		}
	}
	return fail(stderr, "keys: expected 'keys new' or 'keys rotate' (usage: warden %s)", keysUsage)
}

// keysNew is `warden keys new [--alg ml-dsa-65|slh-dsa-128s] [--out
// PREFIX] [--force]`: it writes a new signing key pair (sigkey's file
// formats: the private key to PREFIX, mode 0600; the public key to
// PREFIX.pub) and prints the key id and both paths. It never overwrites a
// file without --force, and never prints the private key.
func keysNew(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("keys new", stderr)
	algName := fs.String("alg", string(sigkey.MLDSA65), "signature algorithm: ml-dsa-65 (FIPS 204) or slh-dsa-128s (FIPS 205, SHA2; slow to sign)")
	out := fs.String("out", "./warden-signing.key", "path of the private key file; the public key is written to the same path with .pub appended")
	force := fs.Bool("force", false, "replace existing key files")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "keys new: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return fail(stderr, "keys new: --out must name a file")
	}
	alg, err := sigkey.ParseAlg(*algName)
	if err != nil || alg == sigkey.Ed25519 {
		return fail(stderr, "keys new: --alg: expected %s or %s, got %q", sigkey.MLDSA65, sigkey.SLHDSA128s, *algName)
	}
	k, err := sigkey.Generate(alg, nil)
	if err != nil {
		return fail(stderr, "keys new: %v", err)
	}
	priv, pub, err := sigkey.WriteKeyPair(k, *out, *force)
	if err != nil {
		return fail(stderr, "keys new: %v", err)
	}
	fmt.Fprintf(stdout, "key_id: %s\nalgorithm: %s\nprivate key: %s (mode 0600; keep it secret)\npublic key: %s\n", k.KeyID(), alg.ACSName(), priv, pub)
	return exitOK
}

// keysRotate is `warden keys rotate --new-kek-file PATH | --new-kek-env
// NAME`: it rewraps every live data key (period DEK) of the trace's
// sealed originals from the configured KEK (trace.seal; or --old-kek-file,
// --old-kek-env) to the new one (seal.Rotate). Session keys and records
// are never touched, so the hash chain verifies as before. The new key
// file is created (random, mode 0600) before anything is rewrapped: an
// interrupted rotation is finished by running the same command again, as
// DEKs already under the new KEK are skipped. It prints the count and what
// to do next: point the config at the new KEK and restart the servers,
// then run it again with --old-kek-file for the DEKs a server still
// holding the old KEK created meanwhile.
func keysRotate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("keys rotate", stderr)
	sf := addSealFlags(fs)
	newFile := fs.String("new-kek-file", "", "the new KEK's file: created with a random key (mode 0600) when missing, else read (32 raw bytes, hex:…, base64:…)")
	newEnv := fs.String("new-kek-env", "", "an environment variable holding the new KEK instead (hex:…, base64:…)")
	oldFile := fs.String("old-kek-file", "", "the KEK the data keys are wrapped by now (default: the config's trace.seal)")
	oldEnv := fs.String("old-kek-env", "", "an environment variable holding the KEK the data keys are wrapped by now")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if (*newFile == "") == (*newEnv == "") {
		return fail(stderr, "keys rotate: expected one of --new-kek-file PATH and --new-kek-env NAME")
	}
	if *oldFile != "" && *oldEnv != "" {
		return fail(stderr, "keys rotate: expected at most one of --old-kek-file and --old-kek-env")
	}
	b, cfg, where, err := sf.open()
	if err != nil {
		return fail(stderr, "keys rotate: %v", err)
	}
	defer b.Close()
	if b.Seal == nil {
		return fail(stderr, "keys rotate: %s keeps no sealing keys", where)
	}
	sc := cfg.Trace.Seal
	var oldKEK seal.KEK
	oldFrom := ""
	switch {
	case *oldFile != "":
		oldKEK, err = seal.FileKEK(*oldFile)
		oldFrom = *oldFile
	case *oldEnv != "":
		oldKEK, err = seal.EnvKEK(*oldEnv)
		oldFrom = "env " + *oldEnv
	default:
		oldKEK, oldFrom, err = sc.ExistingKEK()
		if errors.Is(err, seal.ErrNoKEK) {
			err = fmt.Errorf("%v: nothing to rotate from (name the KEK the data keys are wrapped by with --old-kek-file)", noKEK{oldFrom, sc})
		}
	}
	if err != nil {
		return fail(stderr, "keys rotate: the old KEK: %v", err)
	}
	var newKEK seal.KEK
	newFrom, created := *newFile, false
	if *newFile != "" {
		if _, err := os.Lstat(*newFile); errors.Is(err, os.ErrNotExist) {
			created = true
		}
		// Created before anything is rewrapped: a rotation cut short is
		// finished with the same command, and the same key.
		if err := seal.CreateKEKFile(*newFile); err != nil {
			return fail(stderr, "keys rotate: the new KEK: %v", err)
		}
		newKEK, err = seal.FileKEK(*newFile)
	} else {
		newKEK, err = seal.EnvKEK(*newEnv)
		newFrom = "env " + *newEnv
	}
	if err != nil {
		return fail(stderr, "keys rotate: the new KEK: %v", err)
	}
	if created {
		fmt.Fprintf(stdout, "created the new KEK %s in %s (mode 0600): keep it outside the data directory, and back it up — without it no sealed original opens\n", newKEK.ID(), newFrom)
	}
	if b.Dir != "" && *newFile != "" && seal.InDir(*newFile, b.Dir) {
		fmt.Fprintf(stderr, "warden: keys rotate: warning: the new KEK file is inside the data directory %s: a copy of the directory then opens every sealed original\n", b.Dir)
	}
	if newKEK.ID() == oldKEK.ID() {
		return fail(stderr, "keys rotate: the new KEK (%s) is the one the data keys are to be rewrapped from (%s, %s): to rewrap those still under an earlier KEK, name it with --old-kek-file", newFrom, oldFrom, oldKEK.ID())
	}
	ctx, cancel := interrupted()
	defer cancel()
	n, err := seal.Rotate(ctx, b.Seal, oldKEK, newKEK)
	if err != nil {
		return fail(stderr, "keys rotate: %v (%d data %s rewrapped before it; run the same command again to finish: those already under the new KEK are skipped)",
			err, n, plural(n, "key", "keys"))
	}
	deks, err := b.Seal.DEKs(ctx)
	if err != nil {
		return fail(stderr, "keys rotate: rewrapped %d data %s, then listing them: %v", n, plural(n, "key", "keys"), err)
	}
	under := 0
	for _, w := range deks {
		if w.KEK == newKEK.ID() {
			under++
		}
	}
	fmt.Fprintf(stdout, "rewrapped %d data %s of %s from KEK %s (%s) to KEK %s (%s); %d of %d live data %s now wrapped by the new KEK\n",
		n, plural(n, "key", "keys"), where, oldKEK.ID(), oldFrom, newKEK.ID(), newFrom, under, len(deks), plural(len(deks), "key is", "keys are"))
	point := "trace.seal.kek_file: " + *newFile
	if *newEnv != "" {
		point = "trace.seal.kek_env: " + *newEnv
	}
	oldFlag := "--old-kek-file " + oldFrom
	if *oldEnv != "" {
		oldFlag = "--old-kek-env " + *oldEnv
	} else if strings.HasPrefix(oldFrom, "env ") {
		oldFlag = "--old-kek-env " + strings.TrimPrefix(oldFrom, "env ")
	}
	fmt.Fprintf(stdout, `next:
  1. set %s in the config of every server sharing this trace and restart them now (keep the old KEK until step 3):
     a server still holding the old KEK wraps the data keys it creates (a new period, a new tenant) with it, and once
     its cached keys expire (%s) it cannot unwrap the rewrapped ones, so a decision whose originals it must seal is
     refused (trace_unavailable)
  2. after the restart, run this command again with %s: it rewraps the data keys created meanwhile (the others are skipped)
  3. then destroy the old KEK and its copies: no sealed original needs it any more
records are not touched: warden verify passes as before
`, point, seal.DefaultKeyTTL, oldFlag)
	return exitOK
}
