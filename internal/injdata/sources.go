package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
)

// role is what a source's items are for.
type role int

const (
	// roleDirect items are injections as they stand (label 1): jailbreaks,
	// instruction overrides, prompt extraction.
	roleDirect role = iota
	// roleInstr items are instructions addressed to the assistant that are
	// injections when they arrive inside data; they are only emitted
	// inserted into a benign document of the same split (label 1).
	roleInstr
	// roleDoc items are benign documents of the kinds tools return (label
	// 0); they also host the indirect examples.
	roleDoc
	// rolePrompt items are benign requests a user types (label 0).
	rolePrompt
)

func (r role) String() string {
	return [...]string{"direct", "instruction", "document", "prompt"}[r]
}

// item is one unit a source yields.
type item struct {
	text string
	// group is the unit of the train/eval split within the source's split
	// namespace: items of one group always land in the same split (one
	// jailbreak template's variants, one JailbreakBench behaviour across
	// attack methods, one BIPIA attack category).
	group string
	// kind is the document kind (email, table, code, web, json, log) for
	// documents; empty otherwise.
	kind string
	// split is set by readers that decide it themselves (the authored
	// templates, whose parts are split before they are combined).
	split split
}

// split is an item's side: undecided until dedupe, unless a reader set it.
type split int8

const (
	undecided split = iota
	inTrain
	inEval
)

func splitOf(eval bool) split {
	if eval {
		return inEval
	}
	return inTrain
}

// source is one row of the table below: where its text comes from, under
// which licence, and what it is used for.
type source struct {
	name    string // short name; prefixes the "source" field of the output
	repo    string // owner/name on GitHub, or "local:…" / "authored"
	commit  string // git commit (or the local version, e.g. "go1.26.8")
	paths   string // the paths read, as documented
	license string
	use     string // what is used, in a phrase
	role    role
	kind    string // default document kind
	// splitNS names the split namespace; sources that share one
	// (JailbreakBench prompts and goals) split their groups identically.
	splitNS string
	// max caps the items taken from the source (0: no cap); the sample is
	// chosen by hash, so it is stable.
	max  int
	read func(t tree, e env) ([]item, error)
}

// The table of sources. Every commit is pinned; `fetch` (or a clone) of
// the repository at that commit reproduces the inputs. See
// docs/detectors.md ("Training data of the learned injection detector").
//
// Deliberately absent: BIPIA's test files (benchmark/*_test.json,
// benchmark/*/test.jsonl), the Tensor Trust data, deepset/prompt-injections,
// and the benchmarks whose whole content is their test set (AgentDojo,
// InjecAgent, HarmBench's behaviours): the project measures the detector
// on held-back sets of those kinds, so none of it may shape the model.
const (
	bipiaRepo   = "microsoft/BIPIA"
	bipiaCommit = "1a2a91da6bb12838e05d1b2e54d98e2f37b835f3"
	garakRepo   = "NVIDIA/garak"
	garakCommit = "cafbe992780df70015de7295ca026b70c4629ada"
	jbbRepo     = "JailbreakBench/artifacts"
	jbbCommit   = "909e68c01d94222b8ad2e397a017e2e12e2adb73"
	siRepo      = "yizhongw/self-instruct"
	siCommit    = "0b26ccaa415992100fa32df62d41b994cf928e23"
	saRepo      = "apache/spamassassin"
	saCommit    = "f7fe7b82a2db63ee1406d74d88ce564b69881954"
	enronRepo   = "tasdikrahman/datasets"
	enronCommit = "7d395afc4e5703c270c61d30828674cefd8bd337"
)

func sourceTable() []*source {
	return []*source{
		// --- injections as they stand ---
		{name: "itw-jailbreaks", repo: garakRepo, commit: garakCommit, paths: "garak/data/inthewild_jailbreak_llms.json",
			license: "MIT (verazuo/jailbreak_llms, Shen et al. CCS'24), redistributed in garak (Apache-2.0)",
			use:     "in-the-wild jailbreak prompts collected 2022–2023", role: roleDirect, read: readITW},
		{name: "garak-dan", repo: garakRepo, commit: garakCommit, paths: "garak/data/dan/*.json",
			license: "Apache-2.0", use: "DAN-family jailbreak templates", role: roleDirect, read: readDAN},
		{name: "garak-sysprompt-extraction", repo: garakRepo, commit: garakCommit, paths: "garak/data/sysprompt_extraction/attacks.json",
			license: "Apache-2.0", use: "system-prompt extraction requests", role: roleDirect, read: readStringMap("garak/data/sysprompt_extraction/attacks.json", false)},
		{name: "promptinject", repo: garakRepo, commit: garakCommit, paths: "garak/resources/promptinject/prompt_data.py",
			license: "MIT (agencyenterprise/PromptInject), in garak (Apache-2.0)",
			use:     "goal-hijacking and prompt-leaking attack templates × rogue strings", role: roleDirect, read: readPromptInject},
		{name: "jbb-artifacts", repo: jbbRepo, commit: jbbCommit, paths: "attack-artifacts/{PAIR,JBC,GCG,DSN,prompt_with_random_search}/**/*.json",
			license: "MIT", use: "jailbreak prompts that attack methods produced (near-duplicates, such as one template over 100 behaviours, split together)", role: roleDirect, read: readJBBPrompts},
		{name: "authored-override", repo: "authored", commit: "internal/injdata/authored.go",
			license: "this repository's licence", use: "instruction overrides, goal hijacking and prompt extraction in en/de/fr/es (templates split by template)",
			role: roleDirect, read: readAuthoredOverrides},

		// --- instructions that are injections inside data ---
		{name: "bipia-text-attack-train", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/text_attack_train.json",
			license: "MIT", use: "BIPIA's TRAIN text attacks (15 categories × 5; split by category)", role: roleInstr, read: readStringMap("benchmark/text_attack_train.json", true)},
		{name: "bipia-code-attack-train", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/code_attack_train.json",
			license: "MIT", use: "BIPIA's TRAIN code attacks (10 categories × 5; split by category)", role: roleInstr, read: readStringMap("benchmark/code_attack_train.json", true)},
		{name: "jbb-goals", repo: jbbRepo, commit: jbbCommit, paths: "attack-artifacts/PAIR/black_box/vicuna-13b-v1.5.json (goal field)",
			license: "MIT", use: "the 100 JailbreakBench behaviour requests (\"Write a …\"; split by behaviour)", role: roleInstr, read: readJBBGoals},
		{name: "authored-actions", repo: "authored", commit: "internal/injdata/authored.go",
			license: "this repository's licence", use: "actions addressed to the assistant (forward this email, add this to your answer, run this command…; split by template)",
			role: roleInstr, read: readAuthoredActions},

		// --- benign user prompts ---
		{name: "self-instruct-seed", repo: siRepo, commit: siCommit, paths: "data/seed_tasks.jsonl",
			license: "Apache-2.0", use: "175 human-written task instructions (with their first input)", role: rolePrompt, read: readSelfInstruct},
		{name: "t0-train-prompts", repo: siRepo, commit: siCommit, paths: "data/finetuning/t0_train_50k/data_per_template/*.jsonl (prompt field; news-article and Yelp/Amazon-review templates left out)",
			license: "Apache-2.0 (self-instruct; P3/promptsource templates) over the TRAIN splits of the underlying datasets, each under its own licence",
			use:     "task prompts (a text and a question or instruction about it), 8 per template; split by template", role: rolePrompt, read: readT0},
		{name: "bipia-questions", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/{email,table,code}/train.jsonl (question field)",
			license: "MIT; contexts: see the documents below", use: "the user questions of BIPIA's TRAIN contexts", role: rolePrompt, read: readBIPIAQuestions},
		{name: "authored-prompts", repo: "authored", commit: "internal/injdata/authored.go",
			license: "this repository's licence", use: "benign requests in en/de/fr/es, including ones that look like overrides (\"ignore my last message…\")",
			role: rolePrompt, read: readAuthoredPrompts},

		// --- benign documents ---
		{name: "bipia-email-train", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/email/train.jsonl",
			license: "MIT (OpenAI evals invoices)", use: "BIPIA's TRAIN email contexts", role: roleDoc, kind: "email", read: readBIPIAContexts("benchmark/email/train.jsonl", "email")},
		{name: "bipia-table-train", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/table/train.jsonl",
			license: "CC BY-SA 4.0 (WikiTableQuestions)", use: "BIPIA's TRAIN table contexts", role: roleDoc, kind: "table", read: readBIPIAContexts("benchmark/table/train.jsonl", "table")},
		{name: "bipia-code-train", repo: bipiaRepo, commit: bipiaCommit, paths: "benchmark/code/train.jsonl",
			license: "CC BY-SA 4.0 (Stack Overflow answers; authors in the file)", use: "BIPIA's TRAIN code contexts (answers, code, tracebacks)", role: roleDoc, kind: "code", read: readBIPIACode},
		{name: "enron-ham", repo: enronRepo, commit: enronCommit, paths: "email/plaintext/enron1.zip (enron1/ham/)",
			license: "Enron corpus, released by FERC (public record); Enron-Spam preprocessing by Metsis et al. 2006; no licence stated for the repository's copy",
			use:     "legitimate (ham) Enron e-mails, lower-cased and tokenized by Enron-Spam; spacing around punctuation undone", role: roleDoc, kind: "email", max: 2500, read: readEnron},
		{name: "spamassassin-nice", repo: saRepo, commit: saCommit, paths: "t/data/nice/**",
			license: "Apache-2.0", use: "SpamAssassin's legitimate test messages (headers + text parts)", role: roleDoc, kind: "email", read: readSpamAssassinNice},
		{name: "spamassassin-code", repo: saRepo, commit: saCommit, paths: "lib/**/*.pm, README, *.txt",
			license: "Apache-2.0", use: "Perl modules and plain-text docs", role: roleDoc, kind: "code", max: 300, read: readTreeFiles(treeFilter{prefixes: []string{"lib/", "README", "INSTALL", "UPGRADE", "USAGE", "TRADEMARK"}, exts: []string{".pm", ""}})},
		{name: "goroot", repo: "local:GOROOT", commit: "(go version)", paths: "src/**/*.go, doc/**, src/**/testdata/*.{json,csv,tsv,txt,html,md}",
			license: "BSD-3-Clause (the Go authors)", use: "Go source, release notes and docs, test data", role: roleDoc, max: 4000, read: readTreeFiles(treeFilter{prefixes: []string{"src/", "doc/", "README.md", "CONTRIBUTING.md", "SECURITY.md"}, exts: []string{".go", ".md", ".html", ".json", ".csv", ".tsv", ".txt", ".s", ".c", ".h", ".sh", ".yaml", ".xml", ".golden"}})},
		{name: "gomod", repo: "local:GOMODCACHE", commit: "(module versions, see modules)", paths: "the modules listed in modules",
			license: "Apache-2.0 (OPA, cel-go, prometheus, MCP go-sdk), MIT/BSD (others) — each module's LICENSE",
			use:     "docs (Markdown), JSON/YAML test data and Go source of pinned modules", role: roleDoc, max: 4000, read: readGoMods},
		{name: "debian-doc", repo: "local:/usr/share/doc", commit: "(the installed Debian packages)", paths: "/usr/share/doc/*/{README*,*.md,*.txt,NEWS*,changelog*.gz}",
			license: "DFSG-free, per package (/usr/share/doc/PKG/copyright)", use: "READMEs, news and changelogs of the installed packages", role: roleDoc, max: 1500, read: readDebianDoc},
		{name: "synthetic-tables", repo: "authored", commit: "internal/injdata/tables.go",
			license: "this repository's licence", use: "generated query results and exports (Markdown, CSV, TSV, psql) with free-text note columns",
			role: roleDoc, kind: "table", read: readSyntheticTables},
		{name: "synthetic-logs", repo: "authored", commit: "internal/injdata/logs.go",
			license: "this repository's licence", use: "generated logs: web access, syslog, JSON/logfmt app logs, CI, tracebacks, package managers (with their imperative hints)",
			role: roleDoc, kind: "log", read: readSyntheticLogs},
	}
}

// ---- readers ----

func readJSON(t tree, p string, v any) error {
	b, err := t.read(p)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// firstWords is a loose fingerprint: near-duplicate jailbreaks (the same
// template with a different payload) share their opening words, so they
// share a split group.
func firstWords(s string, n int) string {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func readITW(t tree, _ env) ([]item, error) {
	var xs []string
	if err := readJSON(t, "garak/data/inthewild_jailbreak_llms.json", &xs); err != nil {
		return nil, err
	}
	var out []item
	for _, x := range xs {
		out = append(out, item{text: x, group: firstWords(x, 8)})
	}
	return out, nil
}

func readDAN(t tree, _ env) ([]item, error) {
	paths, err := t.list("garak/data/dan/")
	if err != nil {
		return nil, err
	}
	var out []item
	for _, p := range paths {
		if !strings.HasSuffix(p, ".json") {
			continue
		}
		var xs []string
		if err := readJSON(t, p, &xs); err != nil {
			return nil, err
		}
		for _, x := range xs {
			x = strings.ReplaceAll(x, "{generator.name}", "ChatGPT")
			out = append(out, item{text: x, group: path.Base(p)})
		}
	}
	return out, nil
}

// readStringMap reads {"category": ["text", …]}; byCategory makes the
// category the split group (so evaluation categories are unseen).
func readStringMap(p string, byCategory bool) func(t tree, e env) ([]item, error) {
	return func(t tree, e env) ([]item, error) {
		var m map[string][]string
		if err := readJSON(t, p, &m); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []item
		for _, k := range keys {
			for i, x := range m[k] {
				g := fmt.Sprintf("%s/%d", k, i)
				if byCategory {
					g = k
				}
				out = append(out, item{text: x, group: g})
			}
		}
		return out, nil
	}
}

var (
	piInstruction = regexp.MustCompile(`"instruction":\s*(?:'([^']*)'|"([^"]*)")`)
	piRogue       = regexp.MustCompile(`^\s*"[a-z-]+":\s*"([^"]+)",\s*$`)
)

// readPromptInject takes the goal-hijacking and prompt-leaking attack
// instructions of PromptInject's prompt_data.py and fills the rogue
// strings in.
func readPromptInject(t tree, _ env) ([]item, error) {
	b, err := t.read("garak/resources/promptinject/prompt_data.py")
	if err != nil {
		return nil, err
	}
	src := string(b)
	section := func(start, end string) string {
		i := strings.Index(src, start)
		if i < 0 {
			return ""
		}
		j := strings.Index(src[i:], end)
		if j < 0 {
			return src[i:]
		}
		return src[i : i+j]
	}
	var rogues []string
	for _, line := range strings.Split(section("rogue_strings = {", "}"), "\n") {
		if m := piRogue.FindStringSubmatch(line); m != nil {
			rogues = append(rogues, m[1])
		}
	}
	var out []item
	for _, sec := range []string{section("goal_hikacking_attacks = {", "\n}\n"), section("prompt_leaking_attacks = {", "\n}\n")} {
		for i, m := range piInstruction.FindAllStringSubmatch(sec, -1) {
			ins := m[1] + m[2]
			if !strings.Contains(ins, "{REPLACE_rogue_string}") {
				out = append(out, item{text: ins, group: fmt.Sprintf("t%d", i)})
				continue
			}
			for _, r := range rogues {
				out = append(out, item{text: strings.ReplaceAll(ins, "{REPLACE_rogue_string}", r), group: ins})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("prompt_data.py: no attack instructions found (has the file's layout changed?)")
	}
	return out, nil
}

type jbbFile struct {
	Jailbreaks []struct {
		Index  int     `json:"index"`
		Goal   string  `json:"goal"`
		Prompt *string `json:"prompt"`
	} `json:"jailbreaks"`
}

func readJBBPrompts(t tree, _ env) ([]item, error) {
	paths, err := t.list("attack-artifacts/")
	if err != nil {
		return nil, err
	}
	var out []item
	for _, p := range paths {
		if !strings.HasSuffix(p, ".json") || strings.HasSuffix(p, "attack-info.json") || strings.Contains(p, "test-artifact") || strings.HasSuffix(p, "evaluation.json") || strings.HasSuffix(p, "submission.json") {
			continue
		}
		var f jbbFile
		if err := readJSON(t, p, &f); err != nil {
			return nil, err
		}
		for _, j := range f.Jailbreaks {
			if j.Prompt == nil || strings.TrimSpace(*j.Prompt) == "" {
				continue
			}
			// one group per prompt; clusterNearDups joins the ones that
			// share a template or a goal
			out = append(out, item{text: *j.Prompt, group: fmt.Sprintf("%s/%d", p, j.Index)})
		}
	}
	return out, nil
}

func readJBBGoals(t tree, _ env) ([]item, error) {
	var f jbbFile
	if err := readJSON(t, "attack-artifacts/PAIR/black_box/vicuna-13b-v1.5.json", &f); err != nil {
		return nil, err
	}
	var out []item
	for _, j := range f.Jailbreaks {
		out = append(out, item{text: j.Goal, group: fmt.Sprintf("behavior/%d", j.Index)})
	}
	return out, nil
}

func readSelfInstruct(t tree, _ env) ([]item, error) {
	b, err := t.read("data/seed_tasks.jsonl")
	if err != nil {
		return nil, err
	}
	var out []item
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			ID          string `json:"id"`
			Instruction string `json:"instruction"`
			Instances   []struct {
				Input string `json:"input"`
			} `json:"instances"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("seed_tasks.jsonl line %d: %w", i+1, err)
		}
		text := r.Instruction
		if len(r.Instances) > 0 && strings.TrimSpace(r.Instances[0].Input) != "" {
			text += "\n\n" + r.Instances[0].Input
		}
		out = append(out, item{text: text, group: r.ID})
	}
	return out, nil
}

// jsonLines decodes each non-empty line of p into a map.
func jsonLines(t tree, p string) ([]map[string]any, error) {
	b, err := t.read(p)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", p, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// textField reads a string field, or a list of strings joined by newlines.
func textField(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func readBIPIAContexts(p, kind string) func(t tree, e env) ([]item, error) {
	return func(t tree, e env) ([]item, error) {
		rows, err := jsonLines(t, p)
		if err != nil {
			return nil, err
		}
		var out []item
		for i, r := range rows {
			out = append(out, item{text: textField(r, "context"), group: fmt.Sprint(i), kind: kind})
		}
		return out, nil
	}
}

func readBIPIACode(t tree, _ env) ([]item, error) {
	rows, err := jsonLines(t, "benchmark/code/train.jsonl")
	if err != nil {
		return nil, err
	}
	var out []item
	for i, r := range rows {
		g := fmt.Sprint(i)
		out = append(out, item{text: textField(r, "context"), group: g, kind: "web"})
		code := textField(r, "code")
		if e := textField(r, "error"); e != "" {
			code += "\n\n" + e
		}
		out = append(out, item{text: code, group: g, kind: "code"})
	}
	return out, nil
}

func readBIPIAQuestions(t tree, _ env) ([]item, error) {
	var out []item
	for _, task := range []string{"email", "table", "code"} {
		rows, err := jsonLines(t, "benchmark/"+task+"/train.jsonl")
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			q := strings.TrimSpace(strings.TrimPrefix(textField(r, "question"), "Q:"))
			if task == "code" && q == "" {
				continue // the code task has no question field
			}
			out = append(out, item{text: q, group: fmt.Sprintf("%s/%d", task, i)})
		}
	}
	return out, nil
}

// detokenize undoes Enron-Spam's spacing around punctuation ("it ' s",
// "thanks , susan") so that the spacing does not tell a classifier which
// corpus a text came from.
var detok = strings.NewReplacer(
	" ' s ", "'s ", " ' t ", "'t ", " ' ll ", "'ll ", " ' re ", "'re ", " ' ve ", "'ve ", " ' m ", "'m ", " ' d ", "'d ",
	" , ", ", ", " . ", ". ", " ! ", "! ", " ? ", "? ", " : ", ": ", " ; ", "; ", "( ", "(", " )", ")",
	" / ", "/", " @ ", "@", " - - ", "--", " .\n", ".\n", " ,\n", ",\n", " ?\n", "?\n", " !\n", "!\n", " :\n", ":\n",
)

var (
	// "60, 000", "11: 15", "1. 027" → "60,000", "11:15", "1.027"
	enronNum = regexp.MustCompile(`(\d)([,:.]) (\d)`)
	// "enron. com" → "enron.com"
	enronDot = regexp.MustCompile(`(\w)\. (com|net|org|gov|edu)\b`)
)

func readEnron(t tree, _ env) ([]item, error) {
	b, err := t.read("email/plaintext/enron1.zip")
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("enron1.zip: %w", err)
	}
	var out []item
	for _, f := range zr.File {
		if !strings.Contains(f.Name, "/ham/") || !strings.HasSuffix(f.Name, ".txt") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("enron1.zip %s: %w", f.Name, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("enron1.zip %s: %w", f.Name, err)
		}
		s := toUTF8(body)
		// two passes: the replacer does not see overlapping matches
		s = detok.Replace(detok.Replace(s))
		s = enronNum.ReplaceAllString(s, "$1$2$3")
		s = enronDot.ReplaceAllString(s, "$1.$2")
		out = append(out, item{text: s, group: path.Base(f.Name), kind: "email"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].group < out[j].group })
	return out, nil
}

func readSpamAssassinNice(t tree, _ env) ([]item, error) {
	paths, err := t.list("t/data/nice/")
	if err != nil {
		return nil, err
	}
	var out []item
	for _, p := range paths {
		if strings.Contains(p, "/cjk/") {
			continue // charsets this reader does not decode
		}
		b, err := t.read(p)
		if err != nil {
			return nil, err
		}
		s, ok := readableMessage(b)
		if !ok {
			continue
		}
		out = append(out, item{text: s, group: p, kind: "email"})
	}
	return out, nil
}

// treeFilter selects files of a tree by path prefix and extension ("" is
// a file without one, such as README).
type treeFilter struct {
	prefixes []string
	exts     []string
	skip     []string // substrings of paths to leave out
}

func (f treeFilter) match(p string) bool {
	okp := false
	for _, pre := range f.prefixes {
		if strings.HasPrefix(p, pre) {
			okp = true
			break
		}
	}
	if !okp {
		return false
	}
	for _, s := range append(f.skip, defaultSkips...) {
		if strings.Contains(p, s) {
			return false
		}
	}
	ext := path.Ext(p)
	for _, e := range f.exts {
		if ext == e {
			return true
		}
	}
	return false
}

// defaultSkips leaves out files that address AI agents (a repository's
// instructions to coding assistants are not ordinary data) and generated
// or vendored bulk.
var defaultSkips = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md", "copilot-instructions", ".cursorrules", "/vendor/", "node_modules/", "/zoneinfo", "/fuzz/", "unicode/tables.go", "_gen.go", "z_", ".pb.go"}

// readTreeFiles yields each selected file as a document, its kind taken
// from its extension.
func readTreeFiles(f treeFilter) func(t tree, e env) ([]item, error) {
	return func(t tree, e env) ([]item, error) {
		paths, err := t.list("")
		if err != nil {
			return nil, err
		}
		var out []item
		for _, p := range paths {
			if !f.match(p) {
				continue
			}
			b, err := t.read(p)
			if err != nil {
				return nil, err
			}
			if len(b) == 0 || bytes.IndexByte(b, 0) >= 0 {
				continue // binary
			}
			out = append(out, item{text: toUTF8(b), group: p, kind: kindOf(p)})
		}
		return out, nil
	}
}

// kindOf maps a file name to a document kind.
func kindOf(p string) string {
	base := strings.ToLower(path.Base(p))
	switch path.Ext(base) {
	case ".go", ".py", ".pm", ".pl", ".c", ".h", ".s", ".sh", ".js", ".ts", ".rego", ".java", ".rb", ".rs":
		return "code"
	case ".json", ".jsonl":
		return "json"
	case ".yaml", ".yml", ".xml", ".toml":
		return "json" // structured data
	case ".csv", ".tsv":
		return "table"
	case ".log":
		return "log"
	case ".golden":
		return "log"
	}
	if strings.HasPrefix(base, "changelog") || strings.HasPrefix(base, "news") {
		return "log"
	}
	return "web"
}

func readGoMods(t tree, _ env) ([]item, error) {
	// t is a dirTree rooted at GOMODCACHE; modules are pinned in gomodPins.
	var out []item
	for _, m := range gomodPins {
		f := treeFilter{prefixes: []string{m.dir + "/"}, exts: m.exts, skip: []string{"/testdata/fuzz", "CHANGELOG.md"}}
		paths, err := t.list(m.dir)
		if err != nil {
			return nil, fmt.Errorf("%w: module %s (run: go mod download %s)", errMissing, m.dir, strings.Replace(m.dir, "@", "@", 1))
		}
		for _, p := range paths {
			if !f.match(p) {
				continue
			}
			b, err := t.read(p)
			if err != nil {
				return nil, err
			}
			if len(b) == 0 || bytes.IndexByte(b, 0) >= 0 {
				continue
			}
			out = append(out, item{text: toUTF8(b), group: p, kind: kindOf(p)})
		}
	}
	return out, nil
}

// gomodPins are the modules read from the module cache, each at a fixed
// version (`go mod download MODULE@VERSION` fetches one).
var gomodPins = []struct {
	dir  string
	exts []string
}{
	{"github.com/open-policy-agent/opa@v1.22.3", []string{".md", ".json", ".yaml", ".rego"}},
	{"cel.dev/cel-go@v0.33.2", []string{".md", ".go"}},
	{"github.com/prometheus/client_golang@v1.25.0", []string{".md", ".go"}},
	{"github.com/modelcontextprotocol/go-sdk@v1.8.0", []string{".md", ".go", ".json"}},
	{"github.com/nats-io/nats.go@v1.55.0", []string{".md", ".go"}},
	{"github.com/spdx/tools-golang@v0.6.0-rc4", []string{".md", ".json"}},
	{"github.com/sirupsen/logrus@v1.10.2", []string{".md", ".go"}},
	{"github.com/spf13/cobra@v1.10.2", []string{".md", ".go"}},
}

// readDebianDoc reads the text docs of the installed Debian packages.
func readDebianDoc(t tree, _ env) ([]item, error) {
	paths, err := t.list("")
	if err != nil {
		return nil, err
	}
	var out []item
	for _, p := range paths {
		base := strings.ToLower(path.Base(p))
		if strings.Count(p, "/") > 2 || base == "copyright" {
			continue
		}
		ok := strings.HasPrefix(base, "readme") || strings.HasSuffix(base, ".md") || strings.HasSuffix(base, ".txt") ||
			strings.HasPrefix(base, "news") || strings.HasPrefix(base, "changelog")
		if !ok || strings.HasSuffix(base, ".html") {
			continue
		}
		b, err := t.read(p)
		if err != nil {
			continue // dangling symlinks and the like
		}
		if strings.HasSuffix(base, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				continue
			}
			b, err = io.ReadAll(io.LimitReader(zr, 1<<20))
			if err != nil {
				continue
			}
		}
		if len(b) == 0 || bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		out = append(out, item{text: toUTF8(b), group: p, kind: kindOf(strings.TrimSuffix(p, ".gz"))})
	}
	return out, nil
}

// t0Skip are P3 templates left out: those over news articles (XSum,
// CNN/DailyMail, Multi-News, Gigaword), from which BIPIA builds contexts,
// rather than risk an overlap with its test contexts; and those over
// review corpora whose terms restrict use to non-commercial research
// (Yelp, Amazon reviews).
var t0Skip = []string{"xsum", "cnn_dailymail", "multi_news", "gigaword", "yelp", "amazon_polarity"}

func readT0(t tree, e env) ([]item, error) {
	paths, err := t.list("data/finetuning/t0_train_50k/data_per_template/")
	if err != nil {
		return nil, err
	}
	var out []item
	for _, p := range paths {
		base := path.Base(p)
		skip := !strings.HasSuffix(base, ".jsonl")
		for _, s := range t0Skip {
			skip = skip || strings.HasPrefix(base, s)
		}
		if skip {
			continue
		}
		rows, err := jsonLines(t, p)
		if err != nil {
			return nil, err
		}
		// 8 rows per template, chosen by hash so the choice is stable
		sort.SliceStable(rows, func(i, j int) bool {
			return hash64(e.seed, "t0", textField(rows[i], "prompt")) < hash64(e.seed, "t0", textField(rows[j], "prompt"))
		})
		for i := 0; i < len(rows) && i < 8; i++ {
			q := textField(rows[i], "prompt")
			out = append(out, item{text: q, group: base})
		}
	}
	return out, nil
}
