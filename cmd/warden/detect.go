package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/detect"
)

// detectUsage is `warden detect`'s usage line.
const detectUsage = "detect eval FILE... [--threshold T] [--detector injection|injection-learned|injection-signals] [--pack [--event NAME]] [-o text|json]"

// maxEvalLine bounds one JSONL row of `warden detect eval` (16 MiB): a
// longer line is an error naming its file and line, not a crash.
const maxEvalLine = 16 << 20

// evalDetectors are the scores `warden detect eval --detector` can measure.
var evalDetectors = map[string]func(string) float64{
	"injection":         detect.Injection,
	"injection-learned": detect.LearnedInjection,
	"injection-signals": detect.InjectionSignals,
}

// cmdDetect is `warden detect eval` (detectEval).
func cmdDetect(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "eval":
			return detectEval(args[1:], stdin, stdout, stderr)
		case "-h", "-help", "--help", "help":
			fmt.Fprintf(stdout, "Usage: warden %s\n\nRun 'warden detect eval --help' for the input format and the output.\n", detectUsage)
			return exitOK
		}
	}
	return fail(stderr, "detect: expected 'detect eval FILE...' (usage: warden %s)", detectUsage)
}

const detectEvalHelp = `Usage: warden detect eval FILE... [--threshold T] [--detector injection|injection-learned|injection-signals] [--pack [--event NAME]] [-o text|json]

Scores each row of the JSONL files with a detector and prints, per source and
for all rows: n, positives, negatives, detected (score >= threshold), recall
on the positives, false-positive rate on the negatives, and the threshold.

With --pack, each row's text is instead decided as one AOS step by the
built-in policy pack, in process, as 'warden serve' decides it without
--config or --policy (no trace is written, nothing is sent): the step is
--event (default steps/toolCallResult: the text is the tool result's
output; steps/knowledgeRetrieval: a retrieved document's content;
steps/memoryContextRetrieval: a retrieved memory), with the params an AOS
client would send, so the policies' text holds the row's text as it would
over HTTP. A row is detected when the step is held (deny, ask or defer;
a modify, such as a redaction, forwards it), whichever policy decided
it. The threshold reads "pack" (JSON:
"threshold": null, "detector": "pack", and "via": "pack", "event" and
"policies": the ids of the policies that decided the detected rows, the
top 3 with their counts; the text output lists them on a line per source
after the table). A row the Guardian cannot decide stops the evaluation
with FILE:LINE. --threshold and --detector do not apply.

Each line of a FILE (- is standard input) is a JSON object:
  {"text": "...", "label": 1, "source": "emails"}
  text    string, required: the content to score
  label   required: 1 or true for an injection, 0 or false for benign text
  source  string, optional: the group the row is counted in ("" if absent)
Other members are ignored; blank lines are skipped. A line may hold up to
16 MiB. A malformed row stops the evaluation with FILE:LINE and what is
wrong, and nothing is printed on standard output.

Flags:
`

// evalRow is one JSONL row of `warden detect eval`, before validation.
type evalRow struct {
	Text   json.RawMessage `json:"text"`
	Label  json.RawMessage `json:"label"`
	Source json.RawMessage `json:"source"`
}

// evalStats are the counts of one source (or of all rows).
type evalStats struct {
	N, Positives, Negatives, Detected int
	TruePositives, FalsePositives     int
	// Policies counts the detected rows by the policy that decided them
	// (--pack; nil otherwise).
	Policies map[string]int
}

// add counts a row; policy, when not "", decided it (a detected row).
func (s *evalStats) add(positive, detected bool, policy string) {
	if detected && policy != "" {
		if s.Policies == nil {
			s.Policies = map[string]int{}
		}
		s.Policies[policy]++
	}
	s.N++
	if positive {
		s.Positives++
	} else {
		s.Negatives++
	}
	if detected {
		s.Detected++
		if positive {
			s.TruePositives++
		} else {
			s.FalsePositives++
		}
	}
}

// ratio is a/b, or NaN when b is 0 (no row to measure it on).
func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// evalResult is one source's line of `warden detect eval -o json`.
type evalResult struct {
	Source         string   `json:"source"`
	Detector       string   `json:"detector"`
	Threshold      float64  `json:"threshold"`
	N              int      `json:"n"`
	Positives      int      `json:"positives"`
	Negatives      int      `json:"negatives"`
	Detected       int      `json:"detected"`
	TruePositives  int      `json:"true_positives"`
	FalsePositives int      `json:"false_positives"`
	Recall         *float64 `json:"recall"`              // on the positives; null without any
	FPR            *float64 `json:"false_positive_rate"` // on the negatives; null without any
}

func (s *evalStats) result(source, detector string, threshold float64) evalResult {
	opt := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return evalResult{Source: source, Detector: detector, Threshold: threshold,
		N: s.N, Positives: s.Positives, Negatives: s.Negatives, Detected: s.Detected,
		TruePositives: s.TruePositives, FalsePositives: s.FalsePositives,
		Recall: opt(ratio(s.TruePositives, s.Positives)), FPR: opt(ratio(s.FalsePositives, s.Negatives))}
}

// evalJudge decides one row's text (at line of its file): whether it is
// detected, and the policy that decided it ("" outside --pack).
type evalJudge func(ctx context.Context, text string, line int) (detected bool, policy string, err error)

// detectEval is `warden detect eval FILE...`: it scores every row of the
// JSONL files with the detector (detect.Injection, the score the built-in
// pack's injection policies use) and prints recall and false positives
// per source and for all rows, at --threshold (default
// detect.InjectionThreshold, the pack's); with --pack it decides every
// row as an AOS step through the built-in pack instead (detect_pack.go).
// It is how a user checks the detector, or the pack, on their own data.
// Flags may come before or after the files.
func detectEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("detect eval", stderr)
	threshold := fs.Float64("threshold", detect.InjectionThreshold, "the score at and above which a row counts as detected; the default is the built-in pack's threshold")
	detector := fs.String("detector", "injection", "the score to measure: "+strings.Join(slices.Sorted(maps.Keys(evalDetectors)), ", "))
	pack := fs.Bool("pack", false, "decide each row as an AOS step through the built-in pack (as 'warden serve' does by default) instead of scoring it; detected: denied, asked or deferred")
	event := fs.String("event", catalog.MethodToolCallResult, "with --pack, the AOS step event the text arrives in: "+packEventNames())
	output := fs.String("o", "text", "output: text (an aligned table) or json (an object per source)")
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, detectEvalHelp)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitOK
	}
	if err != nil {
		return exitError // the flag package printed the error
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(files) == 0 {
		return fail(stderr, "detect eval: no FILE given (usage: warden %s)", detectUsage)
	}
	if *pack {
		for _, name := range []string{"threshold", "detector"} {
			if set[name] {
				return fail(stderr, "detect eval: --%s does not apply with --pack: the pack's policies decide", name)
			}
		}
		if _, ok := packEvents[*event]; !ok {
			return fail(stderr, "detect eval: --event %q: want one of %s", *event, packEventNames())
		}
	} else if set["event"] {
		return fail(stderr, "detect eval: --event needs --pack")
	}
	if math.IsNaN(*threshold) || *threshold < 0 || *threshold > 1 {
		return fail(stderr, "detect eval: --threshold %v: want a score in [0, 1]", *threshold)
	}
	score, ok := evalDetectors[*detector]
	if !ok {
		return fail(stderr, "detect eval: --detector %q: want one of %s", *detector, strings.Join(slices.Sorted(maps.Keys(evalDetectors)), ", "))
	}
	if *output != "text" && *output != "json" {
		return fail(stderr, "detect eval: -o: expected text or json, got %q", *output)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	judge := evalJudge(func(_ context.Context, text string, _ int) (bool, string, error) {
		return score(text) >= *threshold, "", nil
	})
	if *pack {
		gd, err := openPackGuardian()
		if err != nil {
			return fail(stderr, "detect eval: the built-in pack: %v", err)
		}
		defer gd.Close(context.Background())
		judge = (&packJudge{d: gd, event: *event}).judge
	}
	all, bySource, err := evalFiles(ctx, files, stdin, judge)
	if err != nil {
		return fail(stderr, "detect eval: %v", err)
	}
	if all.N == 0 {
		return fail(stderr, "detect eval: no rows in %s", strings.Join(files, ", "))
	}
	sources := slices.Sorted(maps.Keys(bySource))

	if *output == "json" {
		var out any
		if *pack {
			o := struct {
				Sources []packResult `json:"sources"`
				All     packResult   `json:"all"`
			}{All: all.packResult("all", *event)}
			for _, s := range sources {
				o.Sources = append(o.Sources, bySource[s].packResult(s, *event))
			}
			out = o
		} else {
			o := struct {
				Sources []evalResult `json:"sources"`
				All     evalResult   `json:"all"`
			}{All: all.result("all", *detector, *threshold)}
			for _, s := range sources {
				o.Sources = append(o.Sources, bySource[s].result(s, *detector, *threshold))
			}
			out = o
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(stderr, "detect eval: %v", err)
		}
		return exitOK
	}
	thresholdCell := strconv.FormatFloat(*threshold, 'g', -1, 64)
	if *pack {
		thresholdCell = "pack"
		fmt.Fprintf(stdout, "built-in pack, event %s, %d %s in %d %s\n\n", *event,
			all.N, plural(all.N, "row", "rows"), len(files), plural(len(files), "file", "files"))
	} else {
		fmt.Fprintf(stdout, "detector %s, threshold %g, %d %s in %d %s\n\n", *detector, *threshold,
			all.N, plural(all.N, "row", "rows"), len(files), plural(len(files), "file", "files"))
	}
	// Numbers align right; the names, padded here to one width, left.
	names := make([]string, len(sources), len(sources)+1)
	width := len("SOURCE")
	for i, s := range sources {
		names[i] = cut(printable(s), 40)
		if s == "" {
			names[i] = "(no source)"
		}
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	// The two spaces between columns are in the cells: with AlignRight,
	// tabwriter's padding would go before the first column too.
	tw := tabwriter.NewWriter(stdout, 0, 4, 0, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t  N\t  POSITIVES\t  NEGATIVES\t  DETECTED\t  RECALL\t  FALSE POSITIVES\t  THRESHOLD\t\n", width, "SOURCE")
	line := func(name string, s *evalStats) {
		fmt.Fprintf(tw, "%-*s\t  %d\t  %d\t  %d\t  %d\t  %s\t  %s\t  %s\t\n", width, name, s.N, s.Positives, s.Negatives, s.Detected,
			percent(s.TruePositives, s.Positives), percent(s.FalsePositives, s.Negatives), thresholdCell)
	}
	for i, s := range sources {
		line(names[i], bySource[s])
	}
	line("all", &all)
	_ = tw.Flush()
	// With --pack, the policies that decided each source's detected rows,
	// a line per source that has any, after the table (a line without the
	// table's cells inside it would break its alignment).
	first := true
	policies := func(name string, s *evalStats) {
		if p := policiesLine(s.Policies); p != "" {
			if first {
				fmt.Fprintln(stdout)
				first = false
			}
			fmt.Fprintf(stdout, "%-*s  policies: %s\n", width, name, p)
		}
	}
	for i, s := range sources {
		policies(names[i], bySource[s])
	}
	policies("all", &all)
	return exitOK
}

// evalFiles reads the rows of files and counts them, per source and all
// together, as judge decides them.
func evalFiles(ctx context.Context, files []string, stdin io.Reader, judge evalJudge) (all evalStats, bySource map[string]*evalStats, err error) {
	bySource = map[string]*evalStats{}
	for _, name := range files {
		err := evalFile(name, stdin, func(source, text string, positive bool, line int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			detected, policy, err := judge(ctx, text, line)
			if err != nil {
				return err
			}
			s := bySource[source]
			if s == nil {
				s = &evalStats{}
				bySource[source] = s
			}
			s.add(positive, detected, policy)
			all.add(positive, detected, policy)
			return nil
		})
		if err != nil {
			return all, nil, err
		}
	}
	return all, bySource, nil
}

// percent is a/b as a percentage with its counts, or "-" when b is 0.
func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
}

// evalFile reads the JSONL rows of the file name ("-": stdin) and calls fn
// with each and its line; the first malformed row, or the first error fn
// returns, is an error naming name:line.
func evalFile(name string, stdin io.Reader, fn func(source, text string, positive bool, line int) error) error {
	var r io.Reader
	if name == "-" {
		r, name = stdin, "(stdin)"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEvalLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		source, text, positive, err := parseEvalRow(b)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if err := fn(source, text, positive, line); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d MiB", name, line+1, maxEvalLine>>20)
		}
		return fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return nil
}

// parseEvalRow validates one JSONL row.
func parseEvalRow(b []byte) (source, text string, positive bool, err error) {
	if b[0] != '{' {
		return "", "", false, fmt.Errorf("want a JSON object {\"text\": …, \"label\": …}, got %s", jsonKind(b))
	}
	var row evalRow
	if err := json.Unmarshal(b, &row); err != nil {
		return "", "", false, fmt.Errorf("invalid JSON: %v", err)
	}
	if len(row.Text) == 0 || string(row.Text) == "null" {
		return "", "", false, errors.New(`"text" is missing`)
	}
	if err := json.Unmarshal(row.Text, &text); err != nil {
		return "", "", false, fmt.Errorf(`"text": want a string, got %s`, jsonKind(row.Text))
	}
	switch string(row.Label) {
	case "", "null":
		return "", "", false, errors.New(`"label" is missing (want 0, 1, false or true)`)
	case "true":
		positive = true
	case "false":
	default:
		var v float64
		if json.Unmarshal(row.Label, &v) != nil || (v != 0 && v != 1) {
			return "", "", false, fmt.Errorf(`"label": want 0, 1, false or true, got %s`, cut(string(row.Label), 40))
		}
		positive = v == 1
	}
	if len(row.Source) > 0 && string(row.Source) != "null" {
		if err := json.Unmarshal(row.Source, &source); err != nil {
			return "", "", false, fmt.Errorf(`"source": want a string, got %s`, jsonKind(row.Source))
		}
	}
	return source, text, positive, nil
}

// jsonKind names the kind of JSON value b starts with.
func jsonKind(b []byte) string {
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '"':
		return "a string"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	case b[0] == 'n':
		return "null"
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		return "a number"
	}
	return fmt.Sprintf("%q", cut(string(b), 20))
}
