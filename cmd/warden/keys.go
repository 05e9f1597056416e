package main

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/sigkey"
)

// cmdKeys is `warden keys new [--alg ml-dsa-65|slh-dsa-128s] [--out
// PREFIX] [--force]`: it writes a new signing key pair (sigkey's file
// formats: the private key to PREFIX, mode 0600; the public key to
// PREFIX.pub) and prints the key id and both paths. It never overwrites a
// file without --force, and never prints the private key.
func cmdKeys(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "new" {
		return fail(stderr, "keys: expected 'keys new [--alg ml-dsa-65|slh-dsa-128s] [--out PREFIX] [--force]'")
	}
	fs := newFlags("keys new", stderr)
	algName := fs.String("alg", string(sigkey.MLDSA65), "signature algorithm: ml-dsa-65 (FIPS 204) or slh-dsa-128s (FIPS 205, SHA2; slow to sign)")
	out := fs.String("out", "./warden-signing.key", "path of the private key file; the public key is written to the same path with .pub appended")
	force := fs.Bool("force", false, "replace existing key files")
	if code, ok := parseFlags(fs, args[1:]); !ok {
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
