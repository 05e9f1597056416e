// Command warden is the Guardian and hook engine for AI agents: `warden serve`
// runs the AOS endpoint and the admin API; the other subcommands check
// policies, evaluate one event, and read the trace. See README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes shared by eval (and hooks dispatch): allow, error, deny, modify.
const (
	exitOK     = 0
	exitError  = 1
	exitDeny   = 2
	exitModify = 3
)

var commands = []struct {
	name, usage string
	run         func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}{
	{"serve", "serve [--config F] [--addr H:P] [--insecure] [--data DIR] [--store postgres://…] [--policy PATH]... [--builtin=false]", cmdServe},
	{"check", "check [--config F] [--policy PATH]... [--builtin=false]", cmdCheck},
	{"eval", "eval --event NAME [--config F] [--policy PATH]... [--builtin=false] [--tenant T] < payload.json", cmdEval},
	{"hooks", "hooks events [--family F] [--sync-only] [-o table|json] | hooks dispatch EVENT [--config F] [--policy PATH]... [--builtin=false] [--data DIR] < payload.json", cmdHooks},
	{"hook", hookUsage, cmdHook},
	{"acs", "acs stdio [--config F] [--policy PATH]... [--builtin=false] [--data DIR]", cmdACS},
	{"mcp", "mcp stdio [--config F] [--policy PATH]... [--builtin=false] [--data DIR] [--name N] -- CMD ARGS...", cmdMCP},
	{"test", "test [PATH]... [--coverage] [-o text|json|junit]", cmdTest},
	{"runs", "runs [--data DIR | --store postgres://…] [--session S] [--event E] [--decision D] [--surface S] [--tool T] [--policy P] [--since DUR|RFC3339] [--last N] [--after ID] [--follow] [-o table|json|ocsf]", cmdRuns},
	{"replay", "replay [--data DIR | --store postgres://…] [--config F] [--policy PATH]... [--builtin=false] [--since DUR|RFC3339] [--session S] [--event E] [-o table|json]", cmdReplay},
	{"verify", "verify [--data DIR] [--pubkey F] [-o text|json] | verify --store postgres://… [-o text|json]", cmdVerify},
	{"migrate", "migrate --store postgres://… | migrate --config F", cmdMigrate},
	{"agbom", agbomUsage, cmdAgBOM},
	{"approvals", "approvals list [--state S] [-o table|json] | approvals show ID [-o table|json] | approvals approve|deny ID [--reason R]  [--server URL] [--token-file F] (token: $WARDEN_TOKEN)", cmdApprovals},
	{"forget", forgetUsage, cmdForget},
	{"keys", keysUsage, cmdKeys},
	{"detect", detectUsage, cmdDetect},
	{"token", "token new --name N --scopes S[,S...] [--tenant T]", cmdToken},
	{"version", "version", cmdVersion},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitError
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "warden: unknown command %q (run 'warden help')\n", args[0])
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "warden — Guardian and hook engine for AI agents\n\nUsage:")
	for _, c := range commands {
		fmt.Fprintf(w, "  warden %s\n", c.usage)
	}
}

// newFlags returns a flag set that reports errors as one line on stderr.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("warden "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // a bad flag is one error line; -h prints the flags (parseFlags)
	return fs
}

// parseFlags parses args; it returns an exit code and false when the caller
// must stop (bad flags or -h).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
			return exitOK, false
		}
		return exitError, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitError, false
	}
	return 0, true
}

// multiFlag is a repeatable string flag (--policy A --policy B).
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*m = append(*m, v)
	return nil
}

// fail prints one clear error line and returns exitError.
func fail(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "warden: "+format+"\n", args...)
	return exitError
}
