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
	fmt.Fprintf(stdout, "ok: %d policies from %s, %d hooks\n", gd.Policies().Len(), source(gd, *gf.builtin), len(gd.Config().Hooks))
	return exitOK
}
