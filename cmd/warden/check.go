package main

import (
	"fmt"
	"io"
)

func cmdCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("check", stderr)
	configPath := fs.String("config", "", "config file (YAML)")
	var policies multiFlag
	fs.Var(&policies, "policy", "policy file or directory (repeatable)")
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
	src := "built-in pack"
	if len(s.paths) > 0 {
		src = fmt.Sprint(s.paths)
	}
	fmt.Fprintf(stdout, "ok: %d policies from %s, %d hooks\n", s.set.Len(), src, len(s.cfg.Hooks))
	return exitOK
}
