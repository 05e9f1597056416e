package main

import (
	"fmt"
	"io"
)

func cmdCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("check", stderr)
	configPath := fs.String("config", "", "config file (YAML)")
	policies := addPolicyFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	s, err := loadSetup(*configPath, policies)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	if _, _, _, err := s.decider(nil, nil); err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	fmt.Fprintf(stdout, "ok: %d policies from %s, %d hooks, revision %s\n",
		s.set.Len(), s.spec, len(s.cfg.Hooks), s.set.Revision()[:12])
	return exitOK
}
