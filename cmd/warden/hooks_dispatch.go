package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/sqlite"
)

// dispatchTimeout bounds one `warden hooks dispatch`, async hooks included.
const dispatchTimeout = 60 * time.Second

// cmdHooksDispatch runs the configured chain for one hook event, with the
// payload on stdin, records it in the trace and prints the dispatch result
// (CONTRACT §5): exit 0 allow, 2 deny, 3 modify. It is what an agent runtime
// calls as a command hook.
func cmdHooksDispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hooks dispatch", stderr)
	configPath := fs.String("config", "", "config file (YAML)")
	data := fs.String("data", "./warden-data", "data directory (SQLite trace); \"\" records nothing")
	policies := addPolicyFlags(fs)
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
		return fail(stderr, "hooks dispatch: usage: warden hooks dispatch EVENT [--config F] [--policy P]... [--builtin=false] [--data DIR] < payload.json")
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, hooks.MaxPayload+1))
	if err != nil {
		return fail(stderr, "hooks dispatch: reading stdin: %v", err)
	}
	if len(payload) > hooks.MaxPayload {
		return fail(stderr, "hooks dispatch: payload exceeds %d bytes", hooks.MaxPayload)
	}
	s, err := loadSetup(*configPath, policies)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	var store *sqlite.Store
	if *data != "" {
		if store, err = sqlite.Open(*data, sqlite.Options{}); err != nil {
			return fail(stderr, "opening the trace in %s: %v", *data, err)
		}
		defer store.Close()
	}
	traceStore := tracer(store)
	dec, _, router, err := s.decider(traceStore, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	pool := hooks.NewPool(0, 0, traceStore)
	res, err := hooks.NewDispatcher(dec, router, pool).Dispatch(ctx, event, payload)
	pool.Close(ctx) // async hooks of this event finish before the process exits
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
