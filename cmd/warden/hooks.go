package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wardenhq/warden/catalog"
)

// hooksCommands are the subcommands of `warden hooks`; a new one is a row.
var hooksCommands = []struct {
	name, usage string
	run         func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}{
	{"events", "events [--family F] [--sync-only] [-o table|json]", cmdHooksEvents},
	{"dispatch", "dispatch EVENT [--config F] [--policy PATH]... [--data DIR] < payload.json", cmdHooksDispatch},
}

// cmdHooks runs `warden hooks SUBCOMMAND ...`.
func cmdHooks(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	names := make([]string, len(hooksCommands))
	for i, c := range hooksCommands {
		names[i] = c.name
	}
	if len(args) == 0 {
		return fail(stderr, "hooks: missing subcommand (one of: %s)", strings.Join(names, ", "))
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, "Usage:")
		for _, c := range hooksCommands {
			fmt.Fprintf(stderr, "  warden hooks %s\n", c.usage)
		}
		return exitOK
	}
	for _, c := range hooksCommands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	return fail(stderr, "hooks: unknown subcommand %q (one of: %s)", args[0], strings.Join(names, ", "))
}

// cmdHooksEvents prints the hook catalog (docs/hooks.md), optionally one family
// or the sync-eligible events only, as a table or as JSON.
func cmdHooksEvents(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hooks events", stderr)
	family := fs.String("family", "", "only this family (e.g. tool, permission, steps, a2a, message-filtering)")
	syncOnly := fs.Bool("sync-only", false, "only events that accept mode: sync")
	out := fs.String("o", "table", "output: table or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *out != "table" && *out != "json" {
		return fail(stderr, "-o: expected table or json, got %q", *out)
	}
	events := catalog.Select(*family, *syncOnly)
	if *family != "" && !knownFamily(*family) {
		fmt.Fprintf(stderr, "warden: no family %q (families: %s)\n", *family, strings.Join(catalog.Families(), ", "))
	}
	if *out == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(events); err != nil {
			return fail(stderr, "%v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tFAMILY\tSOURCE\tSYNC\tDIRECTION\tPAYLOAD\tPATCH")
	for _, e := range events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Family, e.Source,
			e.SyncLabel(), dash(e.Direction), e.Payload, e.Patch)
	}
	return flushErr(tw.Flush(), stderr)
}

func knownFamily(f string) bool {
	for _, k := range catalog.Families() {
		if k == f {
			return true
		}
	}
	return false
}
