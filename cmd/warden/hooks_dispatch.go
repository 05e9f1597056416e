package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hooks"
)

// dispatchTimeout bounds one `warden hooks dispatch`, async hooks included.
const dispatchTimeout = 60 * time.Second

// cmdHooksDispatch runs the configured chain for one hook event, with the
// payload on stdin, records it in the trace and prints the dispatch result
// (docs/hooks.md): exit 0 allow, 2 deny, 3 modify. It is what an agent runtime
// calls as a command hook.
func cmdHooksDispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hooks dispatch", stderr)
	gf := addGuardianFlags(fs)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace); \"\" records nothing")
	// The event may come before or after the flags.
	var event string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		event, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	rest := fs.Args()
	if event == "" && len(rest) > 0 {
		event, rest = rest[0], rest[1:]
	}
	if event == "" || len(rest) > 0 {
		return fail(stderr, "hooks dispatch: usage: warden hooks dispatch EVENT [--config F] [--policy P]... [--data DIR] < payload.json")
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, hooks.MaxPayload+1))
	if err != nil {
		return fail(stderr, "hooks dispatch: reading stdin: %v", err)
	}
	if len(payload) > hooks.MaxPayload {
		return fail(stderr, "hooks dispatch: payload exceeds %d bytes", hooks.MaxPayload)
	}
	opts := gf.options()
	cfg, err := opts.LoadConfig()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	var store *backend.Backend // nil: no trace
	if cfg.Store != "" || *data != "" {
		// store: postgres://… when configured, else the SQLite trace.
		st, _, err := openServeStore(cfg.Store, *data, nil, false)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		defer st.Close()
		store = st
	}
	opts.Config, opts.ConfigFile, opts.Backend, opts.KeyDir = cfg, "", store, *data
	gd, err := guardian.Open(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	res, err := gd.Dispatch(ctx, event, payload)
	gd.Close(ctx) // async hooks of this event finish (or are recorded as dropped) before the process exits
	if err != nil {
		return fail(stderr, "hooks dispatch: %v", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fail(stderr, "hooks dispatch: %v", err)
	}
	return verdictExit(res.Decision)
}
