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
	"github.com/wardenhq/warden/unseal"
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
	opts := gf.options()
	cfg, err := opts.LoadConfig()
	if err != nil {
		return failed("%v", err)
	}
	opts.Config, opts.ConfigFile = cfg, ""
	r, err := replay.Open(opts)
	if err != nil {
		return failed("%v", err)
	}
	b, where, err := openReadBackend(*storeURL, *data)
	if err != nil {
		return failed("%v", err)
	}
	defer b.Close()
	store := b.Trace
	// With the sealing key, each record is decided on the originals of its
	// redacted values; without it, on the redacted form, as before.
	sealer, noKey := existingSealer(cfg.Trace.Seal, b, where)
	if noKey == nil {
		r = r.WithOriginals(unseal.New(sealer, store))
	}
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
	if noKey != nil {
		rep.Summary.Originals.Unavailable = noKey.Error()
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
	var skipped []string
	if s.SkippedApprovals > 0 {
		skipped = append(skipped, fmt.Sprintf("%d approval", s.SkippedApprovals))
	}
	if s.SkippedUnseal > 0 {
		skipped = append(skipped, fmt.Sprintf("%d unseal", s.SkippedUnseal))
	}
	if len(skipped) > 0 {
		n := s.SkippedApprovals + s.SkippedUnseal
		fmt.Fprintf(w, " (%s %s skipped)", strings.Join(skipped, " and "), plural(n, "record", "records"))
	}
	fmt.Fprintf(w, " under policy revision %s: %d changed", clip(s.Revision, 12), s.Changed)
	if s.Redacted > 0 {
		fmt.Fprintf(w, ", %d of them on redacted input", s.Redacted)
	}
	fmt.Fprintln(w)
	if line := redactedInput(s.Originals); line != "" {
		fmt.Fprintln(w, line)
	}
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

// redactedInput is the one line saying how many records were decided on
// redacted input and why their originals were not available ("" for
// none): no sealing key (o.Unavailable), originals erased, not opened, or
// never sealed.
func redactedInput(o replay.Originals) string {
	if o.Redacted == 0 {
		return ""
	}
	line := fmt.Sprintf("%d %s decided on redacted input: ", o.Redacted, plural(o.Redacted, "record", "records"))
	if o.Unavailable != "" {
		return line + "the originals were not available: " + o.Unavailable
	}
	var why []string
	if o.Erased > 0 {
		why = append(why, fmt.Sprintf("%d with originals erased (warden forget, trace.seal.retention)", o.Erased))
	}
	if o.Failed > 0 {
		why = append(why, fmt.Sprintf("%d whose originals did not open (%s)", o.Failed, o.Error))
	}
	if len(why) == 0 || o.Redacted > o.Erased+o.Failed {
		why = append(why, "originals not sealed (recorded before sealing, with trace.seal off, or a tag collision)")
	}
	return line + strings.Join(why, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
