package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"

	"github.com/wardenhq/warden/policytest"
)

// Exit codes of `warden test`: every case passed, a case failed, or the
// tests could not run (bad flags, a malformed test file, a policy that
// does not compile).
const (
	exitTestPass  = 0
	exitTestFail  = 1
	exitTestUsage = 2
)

// cmdTest runs policy test files (docs/testing-policies.md): `warden test [PATH]...
// [--coverage] [-o text|json|junit]` finds *_test.yaml files under each
// PATH (default "."), decides every case through the core and prints the
// failures and a summary (text), a JSON report, or JUnit XML. --coverage
// adds every policy with the number of cases that matched it (on stderr
// with -o junit, so stdout stays one XML document; in the JSON report
// always).
func cmdTest(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("test", stderr)
	coverage := fs.Bool("coverage", false, "list every policy with the number of cases that matched it, marking those never matched")
	format := fs.String("o", "text", "output: text, json or junit (JUnit XML for CI)")
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "Usage: warden test [PATH]... [--coverage] [-o text|json|junit]\n")
		fs.PrintDefaults()
		return exitTestPass
	}
	if err != nil {
		return exitTestUsage
	}
	switch *format {
	case "text", "json", "junit":
	default:
		fmt.Fprintf(stderr, "warden test: -o %q: want text, json or junit\n", *format)
		return exitTestUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := policytest.Run(ctx, paths...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitTestUsage
	}
	switch *format {
	case "json":
		err = rep.WriteJSON(stdout)
	case "junit":
		err = rep.WriteJUnit(stdout)
		if err == nil && *coverage {
			err = rep.WriteCoverage(stderr)
		}
	default:
		err = rep.WriteText(stdout)
		if err == nil && *coverage {
			err = rep.WriteCoverage(stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden test: writing the report: %v\n", err)
		return exitTestUsage
	}
	if rep.Failed() > 0 {
		return exitTestFail
	}
	return exitTestPass
}

// parseInterspersed parses flags given before, between or after the
// positional arguments (`warden test policies/ --coverage`) and returns
// the positional ones; after "--" every argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos, rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
