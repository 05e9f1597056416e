package main

import (
	"fmt"
	"io"
)

func cmdCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("check", stderr)
	gf := addGuardianFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	gd, err := gf.open(nil, nil, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	set := gd.Policies()
	fmt.Fprintf(stdout, "ok: %d policies from %s, %d hooks, revision %.12s\n", set.Len(), set.Spec(), len(gd.Config().Hooks), set.Revision())
	if sh := gd.ShadowPolicies(""); sh != nil {
		fmt.Fprintf(stdout, "ok: shadow set: %d policies from %s, revision %.12s\n", sh.Len(), sh.Spec(), sh.Revision())
	}
	for _, name := range gd.Config().TenantNames() {
		ts := gd.TenantPolicies(name)
		fmt.Fprintf(stdout, "ok: tenant %s: %d policies from %s, revision %.12s\n", name, ts.Len(), ts.Spec(), ts.Revision())
		if sh := gd.ShadowPolicies(name); sh != nil {
			fmt.Fprintf(stdout, "ok: tenant %s: shadow set: %d policies from %s, revision %.12s\n", name, sh.Len(), sh.Spec(), sh.Revision())
		}
	}
	return exitOK
}
