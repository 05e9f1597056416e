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
)

const hookUsage = "hook claude-code|codex|cursor|gemini [--config F] [--policy P]... [--builtin=false] [--data DIR] | [--server URL --token T] [--timeout D] [--fail-open] < hook.json" +
	" | hook install HOST [--project DIR] [--command PATH] [--dry-run] [-- HOOK FLAGS...]"

// cmdHook is `warden hook HOST` (CONTRACT §15): the command a host's hook
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

func (f failing) Decide(context.Context, *hostadapter.Step) (hostadapter.Answer, error) {
	return hostadapter.Answer{}, f.err
}

// hookDecider opens the in-process ACS Guardian, or the client of a
// running warden's POST /acs. With acs.keys in the config, requests are
// signed with its first key (the "default" key when there is one).
func hookDecider(gf *guardianFlags, data, server, token, tokenFile, agentID string, timeout time.Duration) (hostadapter.Decider, func(), error) {
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
		c.T = &hostadapter.HTTP{URL: u.String() + "/acs", Token: token, Client: &http.Client{Timeout: timeout}}
		return c, func() {}, nil
	}
	if data == "" {
		return nil, nil, errors.New("--data: required in-process (the trace and the ACS sessions live there)")
	}
	store, _, err := openServeStore(cfg.Store, data, nil, false) // store: postgres://… when configured
	if err != nil {
		return nil, nil, err
	}
	opts.Config, opts.ConfigFile, opts.Store, opts.KeyDir = cfg, "", store, data
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

// cmdHookInstall is `warden hook install HOST [--project DIR] [--command
// PATH] [--dry-run] [-- FLAGS...]`: it merges warden's hook entries into
// the host's settings file (the project's with --project, else the
// user's), running `PATH hook HOST FLAGS...`.
func cmdHookInstall(args []string, stdout, stderr io.Writer) int {
	var hostName string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		hostName, args = args[0], args[1:]
	}
	fs := newFlags("hook install", stderr)
	project := fs.String("project", "", "install into this project's settings (default: the user's settings in the home directory)")
	command := fs.String("command", "", "the warden binary the hook runs (default: this one)")
	dryRun := fs.Bool("dry-run", false, "print the merged settings file; write nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "Usage: warden hook install HOST [--project DIR] [--command PATH] [--dry-run] [-- HOOK FLAGS...]")
			fs.PrintDefaults()
			return exitOK
		}
		return exitError
	}
	rest := fs.Args()
	if hostName == "" && len(rest) > 0 && rest[0] != "--" {
		hostName, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if hostName == "" {
		return fail(stderr, "hook install: usage: warden hook install HOST [--project DIR] [--command PATH] [--dry-run] [-- HOOK FLAGS...]")
	}
	if _, err := hostadapter.Lookup(hostName); err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	exe := *command
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fail(stderr, "hook install: finding this binary: %v (pass --command)", err)
		}
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	home := ""
	if *project == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return fail(stderr, "hook install: %v (pass --project)", err)
		}
	} else if abs, err := filepath.Abs(*project); err == nil {
		*project = abs
	}
	path, err := hostadapter.SettingsPath(hostName, *project, home)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	line := hostadapter.Command(append([]string{exe, "hook", hostName}, rest...)...)
	merged, added, err := hostadapter.Install(hostName, path, line, *dryRun)
	if err != nil {
		return fail(stderr, "hook install: %v", err)
	}
	switch {
	case *dryRun:
		stdout.Write(merged)
	case added == 0:
		fmt.Fprintf(stdout, "%s already runs %s; nothing changed\n", path, line)
	default:
		fmt.Fprintf(stdout, "%s: added %d hook entries running %s\n", path, added, line)
	}
	return exitOK
}
