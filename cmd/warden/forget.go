package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/unseal"
)

// forgetUsage is `warden forget`'s usage line.
const forgetUsage = "forget --session ID [--tenant T] [--data DIR | --store postgres://…] [--config F]"

// cmdForget is `warden forget --session ID`: it erases the sealed
// originals of one session by destroying its keys in every period
// (unseal.Service.Forget), and records the erasure in the trace (surface
// unseal, event forget, by "cli:" and the OS user). The session's records
// stay, redacted, and still verify. A session with no key left (never
// sealed anything, or forgotten before) destroys nothing: that is said,
// the request is recorded all the same — the trace then shows that the
// erasure was asked for and what it found — and the exit is 0.
//
// It needs the config the server runs with: sealing on, and the KEK
// (trace.seal) present, which it never creates; a trace without either
// is an error naming what is missing.
func cmdForget(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("forget", stderr)
	sf := addSealFlags(fs)
	session := fs.String("session", "", "the session whose sealed originals are erased (required)")
	tenant := fs.String("tenant", "", "the session's tenant (default: none, the records without a tenant)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *session == "" {
		return fail(stderr, "forget: --session ID is required (usage: warden %s)", forgetUsage)
	}
	b, cfg, where, err := sf.open()
	if err != nil {
		return fail(stderr, "forget: %v", err)
	}
	defer b.Close()
	s, err := existingSealer(cfg.Trace.Seal, b, where)
	if err != nil {
		return fail(stderr, "forget: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	n, err := unseal.New(s, b.Trace).Forget(ctx, cliViewer(), *tenant, *session)
	who := fmt.Sprintf("session %q", *session)
	if *tenant != "" {
		who += fmt.Sprintf(" of tenant %q", *tenant)
	}
	switch {
	case errors.Is(err, audit.ErrUnavailable):
		return fail(stderr, "forget: destroyed %d %s of %s, but the erasure is not recorded: %v", n, plural(n, "key", "keys"), who, err)
	case err != nil:
		return fail(stderr, "forget: %s in %s: %v", who, where, err)
	case n == 0:
		fmt.Fprintf(stdout, "%s has no sealed originals left in %s: no key destroyed (never sealed, or erased before); the request is recorded in the trace\n", who, where)
	default:
		fmt.Fprintf(stdout, "erased the sealed originals of %s in %s: %d %s destroyed; recorded in the trace (event %s)\n",
			who, where, n, plural(n, "key", "keys"), unseal.EventForget)
		fmt.Fprintf(stdout, "its records stay, redacted, and still verify; a running server may still open them from its key cache for up to %s\n", seal.DefaultKeyTTL)
	}
	return exitOK
}
