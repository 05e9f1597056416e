package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

// maxLast caps --last.
const maxLast = 10000

func cmdRuns(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("runs", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	var f warden.Query
	fs.StringVar(&f.Session, "session", "", "only this session id")
	fs.StringVar(&f.Event, "event", "", "only this event")
	fs.StringVar(&f.Decision, "decision", "", "only this decision (allow, deny, modify)")
	fs.StringVar(&f.After, "after", "", "continue after this record id (the next page)")
	last := fs.Int("last", 20, "newest N records")
	out := fs.String("o", "table", "output: table or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *out != "table" && *out != "json" {
		return fail(stderr, "-o: expected table or json, got %q", *out)
	}
	if *last < 1 || *last > maxLast {
		return fail(stderr, "--last: expected a number in 1..%d, got %d", maxLast, *last)
	}
	if f.Decision != "" {
		if _, err := warden.ParseRecorded(f.Decision); err != nil {
			return fail(stderr, "--decision: expected allow, deny, modify, ask or defer, got %q", f.Decision)
		}
	}
	store, err := sqlite.OpenReadOnly(*data)
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Records are written as the trace streams them: --last big records
	// are never all held at once.
	if *out == "json" {
		bw := bufio.NewWriter(stdout)
		n := 0
		var werr error
		bw.WriteString("[")
		err = store.Scan(ctx, f, func(r *warden.Record) bool {
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
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tDECISION\tPOLICY\tREASON\tSESSION\tLATENCY")
	n := 0
	err = store.Scan(ctx, f, func(r *warden.Record) bool {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%dµs\n", r.Time.Format("2006-01-02T15:04:05.000Z"),
			r.Event, r.Decision, dash(r.PolicyID), dash(clip(r.Reason, 60)), dash(clip(r.SessionID, 36)), r.LatencyUS)
		n++
		return n < *last
	})
	if err != nil {
		return fail(stderr, "reading the trace: %v", err)
	}
	return flushErr(tw.Flush(), stderr)
}

func flushErr(err error, stderr io.Writer) int {
	if err != nil {
		return fail(stderr, "%v", err)
	}
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes for the table, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
