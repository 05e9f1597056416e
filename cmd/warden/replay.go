package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/server"
)

// Exit codes of `warden replay`: nothing changed, something changed (a CI
// gate fails), the replay could not be done.
const (
	exitReplaySame    = 0
	exitReplayChanged = 1
	exitReplayError   = 2
)

// cmdReplay re-decides the recorded decisions of the trace under the
// candidate policy set the flags describe (docs/testing-policies.md).
func cmdReplay(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace), read only")
	storeURL := addStoreFlag(fs)
	gf := addGuardianFlags(fs)
	var q audit.Query
	since := fs.String("since", "", "only records from this time on: RFC 3339, or a duration before now (15m, 24h)")
	fs.StringVar(&q.Session, "session", "", "only this session id")
	fs.StringVar(&q.Event, "event", "", "only this event")
	out := fs.String("o", "table", "output: table or json")
	if code, ok := parseFlags(fs, args); !ok {
		if code == exitOK { // -h
			return code
		}
		return exitReplayError
	}
	failed := func(format string, args ...any) int {
		fail(stderr, format, args...)
		return exitReplayError
	}
	if *out != "table" && *out != "json" {
		return failed("-o: expected table or json, got %q", *out)
	}
	if *since != "" {
		t, err := server.ParseWhen(*since, time.Now())
		if err != nil {
			return failed("--since: %v", err)
		}
		q.Since = t
	}
	r, err := replay.Open(gf.options())
	if err != nil {
		return failed("%v", err)
	}
	store, _, err := openReadTrace(*storeURL, *data)
	if err != nil {
		return failed("%v", err)
	}
	defer store.Close()
	if os.Getenv("GOGC") == "" {
		// A replay allocates fast and keeps little (a chunk of rows, the
		// changed records): collecting a fifth as often saves a fifth of
		// its CPU (docs/BENCHMARKS.md, warden replay).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	ctx, stop := interrupted()
	defer stop()
	rep, err := r.Run(ctx, store, q)
	if err != nil {
		return failed("replaying the trace: %v", err)
	}
	if *out == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return failed("%v", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		if err != nil {
			return failed("%v", err)
		}
	} else if err := writeReplay(stdout, rep); err != nil {
		return failed("%v", err)
	}
	if rep.Summary.Changed > 0 {
		return exitReplayChanged
	}
	return exitReplaySame
}

// writeReplay prints rep as tables: the summary line, the counts per
// recorded → replayed decision, the policies whose results changed, then
// each changed record, oldest first.
func writeReplay(w io.Writer, rep *replay.Report) error {
	s := rep.Summary
	fmt.Fprintf(w, "replayed %d %s", s.Replayed, plural(s.Replayed, "record", "records"))
	if s.SkippedApprovals > 0 {
		fmt.Fprintf(w, " (%d approval %s skipped)", s.SkippedApprovals, plural(s.SkippedApprovals, "record", "records"))
	}
	fmt.Fprintf(w, " under policy revision %s: %d changed", clip(s.Revision, 12), s.Changed)
	if s.Redacted > 0 {
		fmt.Fprintf(w, ", %d of them on redacted input", s.Redacted)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nRECORDED\tREPLAYED\tRECORDS")
	for _, t := range s.Transitions {
		mark := ""
		if t.From != t.To {
			mark = "  *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d%s\n", t.From, t.To, t.Records, mark)
	}
	if s.Shadow.Records > 0 {
		fmt.Fprintf(tw, "\nrecorded beside a shadow set: %d, where it disagreed with live: %d\n", s.Shadow.Records, s.Shadow.Disagree)
		if len(s.Shadow.Transitions) > 0 {
			fmt.Fprintln(tw, "LIVE\tSHADOW\tRECORDS")
			for _, t := range s.Shadow.Transitions {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", t.From, t.To, t.Records)
			}
		}
	}
	if len(s.Policies) > 0 {
		fmt.Fprintln(tw, "\nPOLICY\tNEWLY MATCHED\tUNMATCHED\tDECIDED OTHERWISE")
		for _, p := range s.Policies {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", p.Policy, p.NewlyMatched, p.Unmatched, p.Changed)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Changed) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTIME\tEVENT\tTOOL\tRECORDED\tPOLICY\tREPLAYED\tPOLICY\tNOTE")
	for _, c := range rep.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Time.Format("2006-01-02T15:04:05.000Z"), c.Event,
			dash(clip(c.Tool, 32)), c.Old.Decision, dash(c.Old.Policy), c.New.Decision, dash(c.New.Policy),
			dash(strings.Join(c.Notes, "; ")))
	}
	return tw.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
