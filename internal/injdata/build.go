package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// example is one output line. Span, on indirect examples only, is the
// byte range [start, end) of the inserted instruction in Text (as
// inserted: with its comment markers, cell bars or JSON quoting, without
// the surrounding line breaks), so that a trainer scoring windows can
// label only the windows that hold it.
type example struct {
	Text   string `json:"text"`
	Label  int    `json:"label"`
	Source string `json:"source"`
	Span   []int  `json:"span,omitempty"`
}

// span returns the range of added, placed at pos, without its leading and
// trailing white space.
func span(pos int, added string) []int {
	lead := len(added) - len(strings.TrimLeft(added, " \t\n"))
	trail := len(added) - len(strings.TrimRight(added, " \t\n"))
	return []int{pos + lead, pos + len(added) - trail}
}

// loaded is one source after reading, cleaning, capping and
// de-duplication.
type loaded struct {
	src     *source
	items   []item
	eval    []bool // per item: held out
	digest  string // sha256 over the items' texts, in order (the inputs' fingerprint)
	missing string // why the source was skipped, if it was
	dropped map[string]int
}

// Output sizes and mixing.
const (
	maxDirectLen   = 16 << 10 // longer prompts are dropped (a handful of pasted essays)
	minTextLen     = 8
	indirectRate   = 0.6 // share of document windows that also yield an indirect example
	directInDocLen = 600 // direct injections up to this length also serve as inserted instructions
	benignMaxLen   = 32 << 10
)

// suspicious finds benign documents that quote an injection (security
// write-ups, test fixtures of scanners); they are dropped rather than
// labelled benign.
var suspicious = regexp.MustCompile(`(?i)(ignore|disregard|forget) (all )?(of )?(the |your )?(previous|prior|above|earlier) (instructions|directions|prompts?)|\bjailbreak|do anything now|system prompt|prompt injection`)

// prepare cleans, filters and caps one source's items.
func prepare(e env, s *source, items []item) loaded {
	l := loaded{src: s, dropped: map[string]int{}}
	var kept []item
	for _, it := range items {
		it.text = clean(it.text)
		if it.kind == "" {
			it.kind = s.kind
		}
		switch {
		case len(it.text) < minTextLen:
			l.dropped["too short"]++
			continue
		case s.role == roleDirect && len(it.text) > maxDirectLen:
			l.dropped["longer than 16 KiB"]++
			continue
		case s.role == roleDoc && suspicious.MatchString(it.text):
			l.dropped["quotes an injection"]++
			continue
		}
		kept = append(kept, it)
	}
	if s.role == roleDirect && len(kept) > 0 && kept[0].split == undecided {
		clusterNearDups(kept)
	}
	if s.max > 0 && len(kept) > s.max {
		idx := make([]int, len(kept))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			return hash64(e.seed, "cap", s.name, kept[idx[a]].group, kept[idx[a]].text) < hash64(e.seed, "cap", s.name, kept[idx[b]].group, kept[idx[b]].text)
		})
		idx = idx[:s.max]
		sort.Ints(idx)
		l.dropped[fmt.Sprintf("over the cap of %d", s.max)] = len(kept) - s.max
		capped := make([]item, 0, s.max)
		for _, i := range idx {
			capped = append(capped, kept[i])
		}
		kept = capped
	}
	l.items = kept
	return l
}

// dedupe removes texts seen in an earlier source (table order) or earlier
// in the same source, computes each source's digest, then assigns the
// splits: per namespace, over the groups that remain (see heldOut).
func dedupe(e env, ls []loaded) {
	seen := map[string]bool{}
	groups := map[string][]string{} // namespace → groups still undecided
	nsOf := func(s *source) string {
		if s.splitNS != "" {
			return s.splitNS
		}
		return s.name
	}
	for i := range ls {
		l := &ls[i]
		var kept []item
		h := sha256.New()
		for _, it := range l.items {
			k := normKey(it.text)
			if seen[k] {
				l.dropped["duplicate"]++
				continue
			}
			seen[k] = true
			kept = append(kept, it)
			h.Write([]byte(it.text))
			h.Write([]byte{0})
			if it.split == undecided {
				groups[nsOf(l.src)] = append(groups[nsOf(l.src)], it.group)
			}
		}
		l.items = kept
		if l.missing == "" {
			l.digest = hex.EncodeToString(h.Sum(nil))
		}
	}
	held := map[string]map[string]bool{}
	for ns, gs := range groups {
		held[ns] = e.heldOut(ns, gs)
	}
	for i := range ls {
		l := &ls[i]
		l.eval = make([]bool, len(l.items))
		for j, it := range l.items {
			if it.split == undecided {
				l.eval[j] = held[nsOf(l.src)][it.group]
			} else {
				l.eval[j] = it.split == inEval
			}
		}
	}
}

// instr is one instruction of the pool for indirect examples.
type instr struct {
	text, source string
	code         bool // a code attack: preferred in code documents
	direct       bool // a direct injection reused as an inserted one
}

// outputs are the files' contents before shuffling.
type outputs struct {
	train, eval, benign []example
	// counts[source][split+"/"+what]
	counts map[string]map[string]int
}

func (o *outputs) add(split string, ex example, what string) {
	if split == "eval" {
		o.eval = append(o.eval, ex)
	} else {
		o.train = append(o.train, ex)
	}
	o.count(ex.Source, split+"/"+what)
}

func (o *outputs) count(src, key string) {
	if o.counts[src] == nil {
		o.counts[src] = map[string]int{}
	}
	o.counts[src][key]++
}

// build turns the loaded sources into the three outputs.
func build(e env, ls []loaded) *outputs {
	o := &outputs{counts: map[string]map[string]int{}}
	pools := map[string][]instr{} // split → instruction pool
	splitName := func(ev bool) string {
		if ev {
			return "eval"
		}
		return "train"
	}
	for _, l := range ls {
		for i, it := range l.items {
			sp := splitName(l.eval[i])
			switch l.src.role {
			case roleDirect:
				o.add(sp, example{Text: it.text, Label: 1, Source: "direct:" + l.src.name}, "items")
				if len(it.text) <= directInDocLen {
					pools[sp] = append(pools[sp], instr{text: it.text, source: l.src.name, direct: true})
				}
			case roleInstr:
				pools[sp] = append(pools[sp], instr{text: it.text, source: l.src.name, code: strings.Contains(l.src.name, "code")})
				o.count(l.src.name, sp+"/pool")
			case rolePrompt:
				o.add(sp, example{Text: it.text, Label: 0, Source: "prompt:" + l.src.name}, "items")
			}
		}
	}
	// the pools' sources, so that a large source does not drown a small one
	bySource := map[string]map[string][]instr{}
	for sp, p := range pools {
		bySource[sp] = map[string][]instr{}
		for _, in := range p {
			bySource[sp][in.source] = append(bySource[sp][in.source], in)
		}
	}
	names := func(sp string) []string {
		var ns []string
		for n := range bySource[sp] {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		return ns
	}
	// a source's share of the inserted instructions grows with the square
	// root of its size: small sources (three DAN prompts short enough) are
	// not repeated hundreds of times, large ones do not drown the rest.
	// Instructions proper (the indirect kind: "write…", "forward…", "add
	// this to your answer") weigh twice what reused direct injections do.
	weights := map[string][]float64{}
	for sp := range bySource {
		for _, n := range names(sp) {
			w := math.Sqrt(float64(len(bySource[sp][n])))
			if !bySource[sp][n][0].direct {
				w *= 2
			}
			weights[sp] = append(weights[sp], w)
		}
	}
	for _, l := range ls {
		if l.src.role != roleDoc {
			continue
		}
		for i, it := range l.items {
			sp := splitName(l.eval[i])
			r := newRNG(e.seed, "doc", l.src.name, it.group, fmt.Sprint(i))
			w := window(r, it.text, windowSize(r))
			src := "benign:" + it.kind + ":" + l.src.name
			o.add(sp, example{Text: w, Label: 0, Source: src}, "documents")
			if sp == "eval" {
				o.benign = append(o.benign, example{Text: window(r, it.text, benignMaxLen), Label: 0, Source: src})
				o.count(src, "benign/documents")
			} else if len(it.text) > len(w) {
				// The whole document too (up to benignMaxLen), so that the
				// false positives a detector learns to avoid are those of
				// documents as long as tools return.
				rf := newRNG(e.seed, "full", l.src.name, it.group, fmt.Sprint(i))
				o.add(sp, example{Text: window(rf, it.text, benignMaxLen), Label: 0, Source: "benign-full:" + it.kind + ":" + l.src.name}, "full documents")
			}
			ns := names(sp)
			if len(ns) == 0 || !r.chance(indirectRate) {
				continue
			}
			// choose a source, then an instruction of it; code attacks
			// go into code a fifth of the time
			var in instr
			if it.kind == "code" && r.chance(0.2) {
				var code []instr
				for _, n := range ns {
					for _, x := range bySource[sp][n] {
						if x.code {
							code = append(code, x)
						}
					}
				}
				if len(code) > 0 {
					in = pick(r, code)
				}
			}
			if in.text == "" {
				in = pick(r, bySource[sp][pickWeighted(r, ns, weights[sp])])
			}
			text, pos, added, _ := insert(r, w, in.text, it.kind)
			o.add(sp, example{text, 1, "indirect:" + it.kind + "+" + in.source, span(pos, added)}, "indirect")
		}
	}
	shuffle(newRNG(e.seed, "shuffle", "train"), o.train)
	shuffle(newRNG(e.seed, "shuffle", "eval"), o.eval)
	shuffle(newRNG(e.seed, "shuffle", "benign"), o.benign)
	return o
}

// pickWeighted returns one of names, each with a probability proportional
// to its weight.
func pickWeighted(r *rng, names []string, weights []float64) string {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	x := float64(r.next()>>11) / (1 << 53) * total
	for i, w := range weights {
		if x < w {
			return names[i]
		}
		x -= w
	}
	return names[len(names)-1]
}
