// Command injdata builds the training and evaluation data of the learned
// prompt-injection detector (docs/detectors.md) from public repositories fetched to
// this machine, local benign text (GOROOT, pinned modules of the module
// cache, Debian's docs) and templates written here.
//
//	go run ./internal/injdata -sources /work/.mirror -out /work/data/injection
//
// It writes, into -out:
//
//   - train.jsonl and eval.jsonl: {"text","label","source"} lines, label 1
//     for an injection and 0 for benign text; indirect examples also carry
//     "span": [start, end], the inserted instruction's byte range. The split is by source item
//     (a jailbreak template's variants, a JailbreakBench behaviour, a BIPIA
//     attack category, a file): about -eval percent of the items are held
//     out, and nothing of an eval item reaches train.
//   - benign.jsonl: the held-out benign documents at full length (up to 32
//     KiB), the false-positive corpus of tool-output kinds.
//   - manifest.json: every source with its repository, commit, licence,
//     input digest and counts, and the outputs' SHA-256; SHA256SUMS.
//
// Indirect examples are held-out (or train) benign documents with an
// instruction of the same split inserted at a random position, in a form
// that fits the document (a comment in code, a cell in a table, a string
// in JSON, a sentence in text). The same inputs and seed give
// byte-identical outputs. docs/detectors.md lists the sources and what was
// deliberately not used (the benchmarks' test splits).
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

func main() {
	out := flag.String("out", "", "directory to write train.jsonl, eval.jsonl, benign.jsonl, manifest.json (required)")
	sources := flag.String("sources", "", "directory holding the fetched repositories as owner+name/repo (bare git) or owner+name/ (exported files) (required)")
	goroot := flag.String("goroot", "", "GOROOT to read Go source and docs from (default: go env GOROOT; \"none\" to skip)")
	gomodcache := flag.String("gomodcache", "", "module cache to read the pinned modules from (default: go env GOMODCACHE; \"none\" to skip)")
	debdoc := flag.String("debian-doc", "/usr/share/doc", "Debian docs directory (\"none\" to skip)")
	seed := flag.String("seed", "warden-injdata-v1", "seed of every random choice (split, sampling, insertion)")
	evalPct := flag.Int("eval", 20, "percentage of source items held out for evaluation")
	strict := flag.Bool("strict", false, "fail when a source is missing instead of skipping it")
	flag.Parse()
	if *out == "" || *sources == "" {
		fmt.Fprintln(os.Stderr, "injdata: -out and -sources are required")
		flag.Usage()
		os.Exit(2)
	}
	if *evalPct <= 0 || *evalPct >= 100 {
		fmt.Fprintf(os.Stderr, "injdata: -eval %d: want a percentage in 1..99\n", *evalPct)
		os.Exit(2)
	}
	cfg := config{out: *out, sources: *sources, goroot: *goroot, gomodcache: *gomodcache, debdoc: *debdoc, strict: *strict,
		env: env{seed: *seed, evalPct: *evalPct}}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "injdata:", err)
		os.Exit(1)
	}
}

type config struct {
	out, sources, goroot, gomodcache, debdoc string
	strict                                   bool
	env                                      env
}

func goEnv(name string) string {
	b, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// openSource opens the tree a source reads; nil for authored sources.
func openSource(cfg config, s *source) (tree, string, error) {
	local := func(dir, what string) (tree, string, error) {
		if dir == "none" {
			return nil, "", fmt.Errorf("%w: %s skipped (none)", errMissing, what)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, "", fmt.Errorf("%w: %s %s is not a directory", errMissing, what, dir)
		}
		return dirTree{root: dir}, dir, nil
	}
	switch s.repo {
	case "authored":
		return nil, "", nil
	case "local:GOROOT":
		if cfg.goroot == "" {
			cfg.goroot = goEnv("GOROOT")
		}
		t, dir, err := local(cfg.goroot, "GOROOT")
		if err == nil {
			if v, err := os.ReadFile(filepath.Join(dir, "VERSION")); err == nil {
				s.commit = strings.SplitN(strings.TrimSpace(string(v)), "\n", 2)[0]
			}
		}
		return t, dir, err
	case "local:GOMODCACHE":
		if cfg.gomodcache == "" {
			cfg.gomodcache = goEnv("GOMODCACHE")
		}
		return local(cfg.gomodcache, "module cache")
	case "local:/usr/share/doc":
		return local(cfg.debdoc, "Debian docs")
	}
	t, err := openRepo(cfg.sources, s.repo, s.commit)
	return t, filepath.Join(cfg.sources, strings.ReplaceAll(s.repo, "/", "+")), err
}

// load reads every source of the table.
func load(cfg config, w io.Writer) ([]loaded, error) {
	var ls []loaded
	for _, s := range sourceTable() {
		t, where, err := openSource(cfg, s)
		var items []item
		if err == nil {
			items, err = s.read(t, cfg.env)
			if t != nil {
				if cerr := t.close(); err == nil && cerr != nil {
					err = fmt.Errorf("closing %s: %w", where, cerr)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, errMissing) || cfg.strict {
				return nil, fmt.Errorf("source %s (%s@%s): %w", s.name, s.repo, s.commit, err)
			}
			fmt.Fprintf(w, "skipped %s: %v\n", s.name, err)
			ls = append(ls, loaded{src: s, missing: err.Error(), dropped: map[string]int{}})
			continue
		}
		ls = append(ls, prepare(cfg.env, s, items))
	}
	dedupe(cfg.env, ls)
	return ls, nil
}

func run(cfg config, w io.Writer) error {
	ls, err := load(cfg, w)
	if err != nil {
		return err
	}
	o := build(cfg.env, ls)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	files := []struct {
		name string
		xs   []example
	}{{"train.jsonl", o.train}, {"eval.jsonl", o.eval}, {"benign.jsonl", o.benign}}
	sums := map[string]string{}
	var sumLines []string
	for _, f := range files {
		sum, err := writeJSONL(filepath.Join(cfg.out, f.name), f.xs)
		if err != nil {
			return err
		}
		sums[f.name] = sum
		sumLines = append(sumLines, sum+"  "+f.name)
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "SHA256SUMS"), []byte(strings.Join(sumLines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := writeManifest(filepath.Join(cfg.out, "manifest.json"), cfg, ls, o, sums); err != nil {
		return err
	}
	report(w, ls, o, sums)
	return nil
}

func writeJSONL(path string, xs []example) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			f.Close()
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type manifestSource struct {
	Name    string         `json:"name"`
	Repo    string         `json:"repo"`
	Commit  string         `json:"commit"`
	Paths   string         `json:"paths"`
	License string         `json:"license"`
	Use     string         `json:"use"`
	Role    string         `json:"role"`
	Missing string         `json:"missing,omitempty"`
	Items   map[string]int `json:"items"` // train/eval
	Dropped map[string]int `json:"dropped,omitempty"`
	Digest  string         `json:"input_sha256,omitempty"`
}

func writeManifest(path string, cfg config, ls []loaded, o *outputs, sums map[string]string) error {
	m := struct {
		Seed    string                    `json:"seed"`
		EvalPct int                       `json:"eval_percent"`
		Sources []manifestSource          `json:"sources"`
		Outputs map[string]map[string]int `json:"outputs_by_source"`
		Modules []string                  `json:"modules"`
		SHA256  map[string]string         `json:"sha256"`
	}{Seed: cfg.env.seed, EvalPct: cfg.env.evalPct, Outputs: o.counts, SHA256: sums}
	for _, p := range gomodPins {
		m.Modules = append(m.Modules, p.dir)
	}
	for _, l := range ls {
		ms := manifestSource{Name: l.src.name, Repo: l.src.repo, Commit: l.src.commit, Paths: l.src.paths, License: l.src.license,
			Use: l.src.use, Role: l.src.role.String(), Missing: l.missing, Items: map[string]int{"train": 0, "eval": 0}, Dropped: l.dropped, Digest: l.digest}
		for _, ev := range l.eval {
			if ev {
				ms.Items["eval"]++
			} else {
				ms.Items["train"]++
			}
		}
		if len(ms.Dropped) == 0 {
			ms.Dropped = nil
		}
		m.Sources = append(m.Sources, ms)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// report prints the per-source items and the per-output-source lines.
func report(w io.Writer, ls []loaded, o *outputs, sums map[string]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "source\trole\ttrain items\teval items\tdropped\t")
	for _, l := range ls {
		tr, ev := 0, 0
		for _, e := range l.eval {
			if e {
				ev++
			} else {
				tr++
			}
		}
		var d []string
		for k, v := range l.dropped {
			d = append(d, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(d)
		if l.missing != "" {
			d = []string{"MISSING"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t\n", l.src.name, l.src.role, tr, ev, strings.Join(d, ", "))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "output source\tlabel\ttrain\teval\tbenign.jsonl\t")
	var srcs []string
	for s := range o.counts {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		c := o.counts[s]
		label := "0"
		if strings.HasPrefix(s, "direct:") || strings.HasPrefix(s, "indirect:") {
			label = "1"
		}
		if c["train/documents"]+c["train/items"]+c["train/indirect"]+c["eval/documents"]+c["eval/items"]+c["eval/indirect"]+c["benign/documents"] == 0 {
			continue // an instruction source: counted through the indirect lines
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t\n", s, label, c["train/documents"]+c["train/items"]+c["train/indirect"], c["eval/documents"]+c["eval/items"]+c["eval/indirect"], c["benign/documents"])
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntrain.jsonl %d lines, eval.jsonl %d lines, benign.jsonl %d lines\n", len(o.train), len(o.eval), len(o.benign))
	for _, f := range []string{"train.jsonl", "eval.jsonl", "benign.jsonl"} {
		fmt.Fprintf(w, "%s  %s\n", sums[f], f)
	}
}
