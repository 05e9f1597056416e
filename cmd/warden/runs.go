package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/ocsf"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/unseal"
)

// followPoll is how often --follow reads the trace for new records.
var followPoll = 500 * time.Millisecond

// interrupted is the context --follow runs in: done at SIGINT or SIGTERM
// (tests replace it).
var interrupted = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func cmdRuns(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("runs", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	storeURL := addStoreFlag(fs)
	var f audit.Query
	fs.StringVar(&f.Session, "session", "", "only this session id")
	fs.StringVar(&f.Event, "event", "", "only this event")
	fs.StringVar(&f.Decision, "decision", "", "only this decision (allow, deny, modify, ask, defer)")
	fs.StringVar(&f.Surface, "surface", "", "only this surface (aos, acs, mcp, a2a, hooks, sdk; unseal: the unseals and erasures of sealed originals)")
	fs.StringVar(&f.Tool, "tool", "", "only this tool")
	fs.StringVar(&f.Policy, "policy", "", "only the records this policy decided")
	disagree := fs.String("disagree", "", "shadow: only the records whose shadow set would have decided otherwise")
	since := fs.String("since", "", "only records from this time on: RFC 3339, or a duration before now (15m, 24h)")
	fs.StringVar(&f.After, "after", "", "continue after this record id (the next page)")
	last := fs.Int("last", 20, "newest N records")
	follow := fs.Bool("follow", false, "then print new records as they are recorded, until interrupted (oldest first; -o json: one record per line)")
	out := fs.String("o", "table", "output: table, json, or ocsf (each record's OCSF events, one JSON event per line)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *out != "table" && *out != "json" && *out != "ocsf" {
		return fail(stderr, "-o: expected table, json or ocsf, got %q", *out)
	}
	if *last < 1 || *last > audit.MaxLast {
		return fail(stderr, "--last: expected a number in 1..%d, got %d", audit.MaxLast, *last)
	}
	if f.Decision != "" {
		if _, err := warden.ParseRecorded(f.Decision); err != nil {
			return fail(stderr, "--decision: expected allow, deny, modify, ask or defer, got %q", f.Decision)
		}
	}
	if f.Surface != "" && !slices.Contains(audit.Surfaces, f.Surface) && f.Surface != unseal.Surface {
		return fail(stderr, "--surface: expected %s or %s, got %q", strings.Join(audit.Surfaces, ", "), unseal.Surface, f.Surface)
	}
	switch *disagree {
	case "":
	case "shadow":
		f.ShadowDisagrees = true
	default:
		return fail(stderr, "--disagree: expected shadow, got %q", *disagree)
	}
	if *since != "" {
		t, err := server.ParseWhen(*since, time.Now())
		if err != nil {
			return fail(stderr, "--since: %v", err)
		}
		f.Since = t
	}
	if *follow && f.After != "" {
		return fail(stderr, "--after: not with --follow (which starts at the newest records)")
	}
	store, _, err := openReadTrace(*storeURL, *data)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer store.Close()
	if *follow {
		return followRuns(store, f, *last, *out, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Records are written as the trace streams them: --last big records
	// are never all held at once.
	if *out == "ocsf" {
		bw := bufio.NewWriter(stdout)
		n := 0
		var werr error
		err = store.Scan(ctx, f, func(r *audit.Record) bool {
			werr = writeOCSF(bw, r)
			n++
			return werr == nil && n < *last
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			return fail(stderr, "reading the trace: %v", err)
		}
		return flushErr(bw.Flush(), stderr)
	}
	if *out == "json" {
		bw := bufio.NewWriter(stdout)
		n := 0
		var werr error
		bw.WriteString("[")
		err = store.Scan(ctx, f, func(r *audit.Record) bool {
			b, err := json.MarshalIndent(r, "  ", "  ")
			if err != nil {
				werr = err
				return false
			}
			if n > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n  ")
			bw.Write(b)
			n++
			return n < *last
		})
		if n > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString("]\n")
		if err == nil {
			err = werr
		}
		if err != nil {
			return fail(stderr, "reading the trace: %v", err)
		}
		return flushErr(bw.Flush(), stderr)
	}
	t := newRunsTable(stdout)
	n := 0
	err = store.Scan(ctx, f, func(r *audit.Record) bool {
		t.row(r)
		n++
		return n < *last
	})
	if err != nil {
		return fail(stderr, "reading the trace: %v", err)
	}
	return flushErr(t.flush(), stderr)
}

// followRuns prints the newest last records matching f, oldest first, then
// every matching record as it is recorded — by whichever process writes
// the trace — until interrupted. It polls the trace read-only every
// followPoll: all records after the last one read, filtered here, so a
// filter that matches rarely costs no more than one that matches often.
func followRuns(store audit.Store, f audit.Query, last int, format string, stdout, stderr io.Writer) int {
	jsonLines := format == "json"
	ctx, stop := interrupted()
	defer stop()
	// Where following starts, read first: a record recorded after it is
	// printed by the poll, one recorded before by the listing (one in both
	// is printed once).
	cursor := ""
	newest, err := audit.Collect(ctx, store, audit.Query{}, 1)
	if err != nil {
		return fail(stderr, "reading the trace: %v", err)
	}
	if len(newest) == 1 {
		cursor = newest[0].ID
	}
	recent, err := audit.Collect(ctx, store, f, last)
	if err != nil {
		return fail(stderr, "reading the trace: %v", err)
	}
	slices.Reverse(recent)
	listed := map[string]bool{}
	var t *runsTable
	emit := func(r *audit.Record) error {
		if format == "ocsf" {
			return writeOCSF(stdout, r)
		}
		if jsonLines {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", b)
			return err
		}
		t.row(r)
		return nil
	}
	if format == "table" {
		t = newRunsTable(stdout)
	}
	for i := range recent {
		listed[recent[i].ID] = true
		if err := emit(&recent[i]); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	if t != nil {
		if err := t.flush(); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	match := f.Matcher()
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-tick.C:
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			recs, err := audit.Collect(pctx, store, audit.Query{Oldest: true, After: cursor}, 1000)
			cancel()
			if ctx.Err() != nil {
				return exitOK
			}
			if errors.Is(err, audit.ErrUnknownCursor) {
				fmt.Fprintf(stderr, "warden: the record followed from (%s) was pruned; continuing from the newest\n", cursor)
				if newest, err := audit.Collect(ctx, store, audit.Query{}, 1); err == nil && len(newest) == 1 {
					cursor = newest[0].ID
				}
				break
			}
			if err != nil {
				return fail(stderr, "reading the trace: %v", err)
			}
			for i := range recs {
				r := &recs[i]
				cursor = r.ID
				if listed[r.ID] || !match(r) {
					continue
				}
				if err := emit(r); err != nil {
					return fail(stderr, "%v", err)
				}
			}
			if t != nil {
				if err := t.flush(); err != nil {
					return fail(stderr, "%v", err)
				}
			}
			if len(recs) < 1000 {
				break
			}
		}
		clear(listed) // the polls have passed every listed record
	}
}

func flushErr(err error, stderr io.Writer) int {
	if err != nil {
		return fail(stderr, "%v", err)
	}
	return exitOK
}

// writeOCSF writes the OCSF events of r (package ocsf), one JSON object
// per line.
func writeOCSF(w io.Writer, r *audit.Record) error {
	for _, e := range ocsf.Events(r) {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}
