package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/config"
)

// cmdToken is `warden token new --name N --scopes S[,S...] [--tenant T]`:
// it prints a fresh random token once, then the auth.tokens entry that
// holds its sha256 (docs/security.md). warden never stores the token.
func cmdToken(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "new" {
		return fail(stderr, "token: expected 'token new --name N --scopes S[,S...] [--tenant T]'")
	}
	fs := newFlags("token new", stderr)
	name := fs.String("name", "", "the token's name, recorded as the caller of every decision it asks for")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(auth.ScopeNames(), ", "))
	tenant := fs.String("tenant", "", "the tenant the token belongs to (optional)")
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if *name == "" || *scopes == "" {
		return fail(stderr, "token new: --name and --scopes are required")
	}
	sc, err := auth.ParseScopes(*scopes)
	if err != nil {
		return fail(stderr, "token new: --scopes: %v", err)
	}
	tok, sum, err := auth.NewToken()
	if err != nil {
		return fail(stderr, "token new: %v", err)
	}
	entry := fmt.Sprintf("{name: %s, sha256: %q, scopes: [%s]", strconv.Quote(*name), sum, strings.ReplaceAll(sc.String(), ",", ", "))
	if *tenant != "" {
		entry += ", tenant: " + strconv.Quote(*tenant)
	}
	entry += "}"
	// The entry printed is one the config accepts.
	if _, err := config.Parse("token", []byte("auth:\n  tokens:\n    - "+entry+"\n")); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "auth.tokens[0]: "); i >= 0 {
			msg = msg[i+len("auth.tokens[0]: "):]
		}
		return fail(stderr, "token new: %s", msg)
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintln(stdout, "# The token above is shown once: warden keeps only its sha256. Add this entry to the config under auth.tokens:")
	fmt.Fprintln(stdout, "- "+entry)
	return exitOK
}
