package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hostadapter"
	"github.com/wardenhq/warden/internal/noredirect"
)

const hookUsage = "hook claude-code|codex|cursor|gemini [--config F] [--policy P]... [--builtin=false] [--data DIR] | [--server URL --token T] [--timeout D] [--fail-open] < hook.json" +
	" | " + installUsage + " | " + uninstallUsage

// cmdHook is `warden hook HOST` (docs/hosts.md): the command a host's hook
// settings run. It reads the host's hook JSON on stdin, has the step
// decided — in-process, through the same ACS Guardian as `warden acs
// stdio` (so several hook processes may share --data), or by a running
// warden's POST /acs with --server — and writes the host's answer. It
// never exits with a Go error: whatever cannot be decided is answered as
// the host's deny (hostadapter.Fail), unless --fail-open.
func cmdHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "install" {
		return cmdHookInstall(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "uninstall" {
		return cmdHookUninstall(args[1:], stdout, stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fail(stderr, "hook: usage: warden %s", hookUsage)
	}
	host, err := hostadapter.Lookup(args[0])
	if err != nil {
		return fail(stderr, "hook: %v", err)
	}
	fs := newFlags("hook "+host.Name(), stderr)
	gf := addGuardianFlags(fs)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace and ACS sessions; several hook processes may share it)")
	server := fs.String("server", "", "decide with the warden at this base URL (POST /acs) instead of in-process")
	token := fs.String("token", "", "bearer token with the decide scope for --server; default $WARDEN_TOKEN; prefer --token-file or the variable: a flag shows in ps")
	tokenFile := fs.String("token-file", "", "read the bearer token from this file")
	timeout := fs.Duration("timeout", hostadapter.DefaultTimeout, "bound on one decision, handshake included; past it the step is denied")
	failOpen := fs.Bool("fail-open", false, "when warden cannot decide, let the host proceed (default: the host's deny)")
	agentID := fs.String("agent-id", "", "ACS metadata.agent_id (default: the host's name)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "Usage: warden %s\n", hookUsage)
			fs.PrintDefaults()
			return exitOK
		}
		return hookOut(stdout, stderr, hostadapter.Fail(host, nil, "bad flags: "+err.Error(), false))
	}
	if fs.NArg() > 0 {
		return hookOut(stdout, stderr, hostadapter.Fail(host, nil, fmt.Sprintf("unexpected argument %q", fs.Arg(0)), false))
	}
	if *server != "" {
		var local []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "policy" || f.Name == "builtin" || f.Name == "data" {
				local = append(local, "--"+f.Name)
			}
		})
		if len(local) > 0 {
			return hookOut(stdout, stderr, hostadapter.Fail(host, nil,
				strings.Join(local, ", ")+" decide in-process only; with --server the server's policies and trace decide", false))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()
	opts := hostadapter.Options{Timeout: *timeout, FailOpen: *failOpen}
	dec, closeFn, err := hookDecider(gf, *data, *server, *token, *tokenFile, *agentID, *timeout)
	if err != nil {
		// Decode first, so the deny is the host's answer to its event.
		return hookOut(stdout, stderr, hostadapter.Run(ctx, host, failing{err}, stdin, opts))
	}
	defer closeFn()
	return hookOut(stdout, stderr, hostadapter.Run(ctx, host, dec, stdin, opts))
}

// failing is a Decider that cannot decide: the Guardian could not be
// opened.
type failing struct{ err error }

func (f failing) Check(context.Context, *hostadapter.Step) (hostadapter.Answer, error) {
	return hostadapter.Answer{}, f.err
}

// hookDecider opens the in-process ACS Guardian, or the client of a
// running warden's POST /acs. With acs.keys in the config, requests are
// signed with its first key (the "default" key when there is one).
func hookDecider(gf *guardianFlags, data, server, token, tokenFile, agentID string, timeout time.Duration) (hostadapter.Checker, func(), error) {
	opts := gf.options()
	cfg, err := opts.LoadConfig()
	if err != nil {
		return nil, nil, err
	}
	c := &hostadapter.Client{AgentID: agentID}
	if ids := cfg.ACS.KeyIDs(); len(ids) > 0 {
		c.KeyID = ids[0]
		if _, ok := cfg.ACS.Keys["default"]; ok {
			c.KeyID = "default"
		}
		c.Key = cfg.ACS.Keys[c.KeyID]
	}
	if server != "" {
		u, err := url.Parse(strings.TrimSuffix(server, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("--server: expected an http(s) URL, got %q", server)
		}
		if token == "" && tokenFile != "" {
			b, err := os.ReadFile(tokenFile)
			if err != nil {
				return nil, nil, fmt.Errorf("--token-file: %v", err)
			}
			token = strings.TrimSpace(string(b))
		}
		if token == "" {
			token = os.Getenv("WARDEN_TOKEN")
		}
		c.T = &hostadapter.HTTP{URL: u.String() + "/acs", Token: token, Client: noredirect.Client(&http.Client{Timeout: timeout})}
		return c, func() {}, nil
	}
	if data == "" {
		return nil, nil, errors.New("--data: required in-process (the trace and the ACS sessions live there)")
	}
	store, _, err := openServeStore(cfg.Store, data, nil, false) // store: postgres://… when configured
	if err != nil {
		return nil, nil, err
	}
	opts.Config, opts.ConfigFile, opts.Backend, opts.KeyDir = cfg, "", store, data
	opts.Logger = slog.New(slog.DiscardHandler)
	gd, err := guardian.Open(opts)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	h, err := acsHandler(gd, store, cfg, func(string, ...any) {})
	if err != nil {
		gd.Close(context.Background())
		store.Close()
		return nil, nil, err
	}
	c.T = hostadapter.HandlerFunc(func(ctx context.Context, body []byte) []byte { return h.Handle(ctx, body, "stdio") })
	return c, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gd.Close(cctx)
		store.Close()
	}, nil
}

// hookOut writes a host answer and returns its exit code.
func hookOut(stdout, stderr io.Writer, o hostadapter.Output) int {
	if len(o.Stdout) > 0 {
		stdout.Write(o.Stdout)
	}
	if o.Stderr != "" {
		fmt.Fprintln(stderr, o.Stderr)
	}
	return o.Exit
}

// installUsage and uninstallUsage are `warden hook install` and `warden
// hook uninstall`'s usage lines.
const (
	installUsage   = "hook install HOST [--project DIR] [--command PATH] [--data DIR] [--dry-run] [-- HOOK FLAGS...]"
	uninstallUsage = "hook uninstall HOST [--project DIR] [--command PATH] [--dry-run]"
)

// cmdHookInstall is `warden hook install HOST [--project DIR] [--command
// PATH] [--data DIR] [--dry-run] [-- FLAGS...]`: it merges warden's hook
// entries into the host's settings file (the project's with --project,
// else the user's), running `PATH hook HOST --data DIR FLAGS...`. PATH is
// this binary unless --command names one, and never one that `go run`
// built (Go deletes it). DIR is absolute: --data (or a --data among the
// hook flags), else one per-user state directory (stateDir), so every
// project's hooks share one trace; with --server among the hook flags
// there is none. It prints the settings file and the data directory.
func cmdHookInstall(args []string, stdout, stderr io.Writer) int {
	hostName, args := hostArg(args)
	fs := newFlags("hook install", stderr)
	project := fs.String("project", "", "install into this project's settings (default: the user's settings in the home directory)")
	command := fs.String("command", "", "the warden binary the hook runs (default: this one; refused when it is a `go run` build)")
	data := fs.String("data", "", "the hook's data directory, made absolute (default: $XDG_STATE_HOME/warden, else ~/.local/state/warden)")
	dryRun := fs.Bool("dry-run", false, "print the merged settings file; write nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "Usage: warden "+installUsage)
			fs.PrintDefaults()
			return exitOK
		}
		return exitError
	}
	hostName, rest := hostRest(hostName, fs.Args())
	if hostName == "" {
		return fail(stderr, "hook install: usage: warden %s", installUsage)
	}
	if _, err := hostadapter.Lookup(hostName); err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	exe, err := hookBinary(*command)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	rest, dataDir, err := hookDataFlag(rest, *data)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	path, err := settingsPath(hostName, *project)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	line := hostadapter.Command(append([]string{exe, "hook", hostName}, rest...)...)
	merged, changed, err := hostadapter.Install(hostName, path, line, *dryRun)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	if *dryRun {
		stdout.Write(merged)
		return exitOK
	}
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fail(stderr, "hook install: the data directory: %v", err)
		}
	}
	if changed == 0 {
		fmt.Fprintf(stdout, "settings file: %s (already runs %s; nothing changed)\n", path, line)
	} else {
		fmt.Fprintf(stdout, "settings file: %s (%d hook entries added or updated, running %s)\n", path, changed, line)
	}
	if dataDir != "" {
		fmt.Fprintf(stdout, "data directory: %s\n", dataDir)
	} else {
		fmt.Fprintln(stdout, "data directory: none (decided by the --server warden)")
	}
	return exitOK
}

// cmdHookUninstall is `warden hook uninstall HOST [--project DIR]
// [--command PATH] [--dry-run]`: it removes warden's own entries for HOST
// from the settings file install writes — those whose command is `PATH
// hook HOST ...`, PATH being --command, this binary, or any file named
// warden — and leaves every other key, hook and entry as it was. The data
// directory is kept (it holds the trace).
func cmdHookUninstall(args []string, stdout, stderr io.Writer) int {
	hostName, args := hostArg(args)
	fs := newFlags("hook uninstall", stderr)
	project := fs.String("project", "", "remove from this project's settings (default: the user's settings in the home directory)")
	command := fs.String("command", "", "also recognize entries running this warden binary (default: this one, and any file named warden)")
	dryRun := fs.Bool("dry-run", false, "print the settings file as it would be; write nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "Usage: warden "+uninstallUsage)
			fs.PrintDefaults()
			return exitOK
		}
		return exitError
	}
	hostName, rest := hostRest(hostName, fs.Args())
	if hostName == "" || len(rest) > 0 {
		return fail(stderr, "hook uninstall: usage: warden %s", uninstallUsage)
	}
	if _, err := hostadapter.Lookup(hostName); err != nil {
		return fail(stderr, "hook uninstall: %v", err)
	}
	exe := *command
	if exe == "" {
		exe, _ = os.Executable() // "" recognizes files named warden only
	}
	if exe != "" {
		if abs, err := filepath.Abs(exe); err == nil {
			exe = abs
		}
	}
	path, err := settingsPath(hostName, *project)
	if err != nil {
		return fail(stderr, "hook uninstall: %v", err)
	}
	out, removed, err := hostadapter.Uninstall(hostName, path, exe, *dryRun)
	if err != nil {
		return fail(stderr, "hook uninstall: %v", err)
	}
	switch {
	case *dryRun:
		stdout.Write(out)
	case removed == 0:
		fmt.Fprintf(stdout, "settings file: %s (no warden hook entries for %s; nothing changed)\n", path, hostName)
	default:
		fmt.Fprintf(stdout, "settings file: %s (%d warden hook entries removed)\n", path, removed)
	}
	return exitOK
}

// hostArg takes a leading HOST argument off args.
func hostArg(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// hostRest reads HOST after the flags when it was not first, and the hook
// flags after "--".
func hostRest(hostName string, rest []string) (string, []string) {
	if hostName == "" && len(rest) > 0 && rest[0] != "--" {
		hostName, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	return hostName, rest
}

// settingsPath is the host's settings file: the project's (made
// absolute) or the user's.
func settingsPath(hostName, project string) (string, error) {
	home := ""
	if project == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("%v (pass --project)", err)
		}
	} else if abs, err := filepath.Abs(project); err == nil {
		project = abs
	}
	return hostadapter.SettingsPath(hostName, project, home)
}

// hookBinary is the absolute path of the warden binary a hook runs:
// command, else this one. A binary `go run` built is refused: Go keeps it
// in a go-build directory — its build cache (trimmed of what is unused)
// or, in older Go, a temporary directory deleted when `go run` exits — so
// every hook would one day fail to start.
func hookBinary(command string) (string, error) {
	exe := command
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("finding this binary: %v (pass --command)", err)
		}
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	if goRunBuild(exe) {
		return "", fmt.Errorf("%s is a `go run` build, which Go removes: `go install github.com/wardenhq/warden/cmd/warden@latest` and run that, or pass --command PATH", exe)
	}
	return exe, nil
}

// goRunBuild reports whether exe lies in a directory `go run` builds in:
// one whose name starts with go-build (Go's build cache, by default
// ~/.cache/go-build; the temporary go-build… directories), or under
// $GOCACHE.
func goRunBuild(exe string) bool {
	for _, dir := range strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/") {
		if strings.HasPrefix(dir, "go-build") {
			return true
		}
	}
	if c := os.Getenv("GOCACHE"); filepath.IsAbs(c) {
		if rel, err := filepath.Rel(c, exe); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// hookDataFlag settles the hook's --data: the install's --data, or one
// among the hook flags, made absolute in place; else, unless the hook
// decides with --server, the per-user state directory added. It returns
// the hook flags and the data directory ("" with --server).
func hookDataFlag(rest []string, data string) ([]string, string, error) {
	out := append([]string(nil), rest...)
	at, server := -1, false
	for i, a := range out {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "data":
			if at >= 0 {
				return nil, "", errors.New("--data is given twice among the hook flags")
			}
			at = i
		case "server":
			server = true
		}
	}
	if at >= 0 && data != "" {
		return nil, "", errors.New("--data is given both to install and among the hook flags; give it once")
	}
	if server {
		if data != "" || at >= 0 {
			return nil, "", errors.New("--data decides in-process only; with --server the server's trace records")
		}
		return out, "", nil
	}
	if at >= 0 {
		a := out[at]
		if _, v, ok := strings.Cut(a, "="); ok {
			data = v
			out = append(out[:at], out[at+1:]...)
		} else if at+1 < len(out) {
			data = out[at+1]
			out = append(out[:at], out[at+2:]...)
		} else {
			return nil, "", errors.New("--data among the hook flags needs a directory")
		}
	}
	if data == "" {
		var err error
		if data, err = stateDir(); err != nil {
			return nil, "", err
		}
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return nil, "", fmt.Errorf("--data: %v", err)
	}
	return append([]string{"--data", abs}, out...), abs, nil
}

// stateDir is the per-user state directory the hooks share:
// $XDG_STATE_HOME/warden when that is an absolute path, else
// ~/.local/state/warden (the XDG Base Directory default).
func stateDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "warden"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the default data directory (%v); pass --data", err)
	}
	return filepath.Join(home, ".local", "state", "warden"), nil
}
