// Command injtrain trains the learned injection model (detect.Model) from
// JSONL data and writes it with its sha256, bit for bit the same for the
// same data and flags (docs/detectors.md, "The learned injection
// detector"):
//
//	go run ./internal/injtrain -data DIR -out detect/injection.model
//
// DIR holds train.jsonl (what the model learns from) and, for the report
// only, eval.jsonl and benign.jsonl (never trained on). Each line is
// {"text": "...", "label": 0|1, "source": "...", "span": [start, end]}:
// span, optional, is where an injection was inserted into a longer benign
// text (byte offsets), so that only the windows holding it are positives.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/detect"
)

// Example is one line of the data.
type Example struct {
	Text   string `json:"text"`
	Label  int    `json:"label"`
	Source string `json:"source"`
	Span   []int  `json:"span,omitempty"`
}

// maxLine bounds a data line (a long document).
const maxLine = 8 << 20

func readJSONL(path string) ([]Example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Example
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Example
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if e.Label != 0 && e.Label != 1 {
			return nil, fmt.Errorf("%s:%d: label %d, want 0 or 1", path, n, e.Label)
		}
		if e.Span != nil && (len(e.Span) != 2 || e.Span[0] < 0 || e.Span[1] > len(e.Text) || e.Span[0] >= e.Span[1]) {
			return nil, fmt.Errorf("%s:%d: span %v outside the text", path, n, e.Span)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// segment is one training segment: its features' weight indices and label.
type segment struct {
	idx   []uint32
	label float64
}

// segments cuts e into the model's segments (detect.SegmentEnd), each with
// the features counted in it (the features of the whole text, each in the
// segment its last byte falls in, as detect.Model.Logit counts them), and
// labels them: a benign text's segments 0; an inserted injection's (with a
// span) 1 where at least half the segment lies in the span, 0 where none
// of it does, and left out in between. An injection without a span (a
// whole text) gives no segments: which of its sentences carry the attack
// is not known; it is measured and calibrated on, and its shorter forms
// are inserted into documents by the data builder.
func segments(m *detect.Model, e Example) []segment {
	if e.Label == 1 && e.Span == nil {
		return nil
	}
	var ends []int
	for st := 0; st < len(e.Text); {
		st = detect.SegmentEnd(e.Text, st, m.MinSeg, m.MaxSeg)
		ends = append(ends, st)
	}
	idx := make([][]uint32, len(ends))
	k := 0
	detect.Featurize(e.Text, func(h uint64, end int) {
		for ends[k] < end {
			k++
		}
		idx[k] = append(idx[k], m.Index(h))
	})
	var out []segment
	start := 0
	for k, end := range ends {
		seg := segment{idx: idx[k]}
		lo := start
		start = end
		if len(seg.idx) == 0 {
			continue
		}
		if e.Label == 1 {
			in := min(end, e.Span[1]) - max(lo, e.Span[0])
			switch {
			case in <= 0:
			case 2*in >= end-lo:
				seg.label = 1
			default:
				continue
			}
		}
		out = append(out, seg)
	}
	return out
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Options are the training's knobs (flags).
type Options struct {
	Bits   int
	Epochs int
	Rate   float64
	L2     float64
	// NegWeight multiplies the benign segments' class weight (after
	// balancing): the false positives that matter are the rare benign
	// segments that look like instructions.
	NegWeight float64
	Seed      uint64
}

// train fits m's weights and bias to ws by stochastic gradient descent on
// the logistic loss, classes weighted to balance (benign ones times
// o.NegWeight), in a shuffled order from o.Seed: the same data and options
// give the same weights, bit for bit.
func train(m *detect.Model, ws []segment, o Options) {
	var pos, neg float64
	for _, w := range ws {
		if w.label == 1 {
			pos++
		} else {
			neg++
		}
	}
	wPos, wNeg := (pos+neg)/(2*max(pos, 1)), o.NegWeight*(pos+neg)/(2*max(neg, 1))
	weights := make([]float64, len(m.W))
	bias := 0.0
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	step := 0
	total := o.Epochs * len(ws)
	for range o.Epochs {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			w := ws[k]
			scale := float64(m.Scale(len(w.idx)))
			z := 0.0
			for _, i := range w.idx {
				z += weights[i]
			}
			z = bias + scale*z
			cw := wNeg
			if w.label == 1 {
				cw = wPos
			}
			g := cw * (sigmoid(z) - w.label)
			rate := o.Rate * (1 - float64(step)/float64(total+1))
			step++
			for _, i := range w.idx {
				weights[i] -= rate * (scale*g + o.L2*weights[i])
			}
			bias -= rate * g
		}
	}
	for i, w := range weights {
		m.W[i] = float32(w)
	}
	m.Bias = float32(bias)
}

// calibrate fits Platt scaling (A, B) on the texts' logits and labels by
// damped Newton steps on the logistic loss, with Platt's smoothed targets
// and a weak prior towards A = 1, B = 0.
func calibrate(m *detect.Model, es []Example) {
	z := make([]float64, len(es))
	var pos, neg float64
	for i, e := range es {
		z[i] = float64(m.Logit(e.Text))
		if e.Label == 1 {
			pos++
		} else {
			neg++
		}
	}
	hi, lo := (pos+1)/(pos+2), 1/(neg+2)
	a, b := 1.0, 0.0
	for range 100 {
		var ga, gb, haa, hab, hbb float64
		for i, e := range es {
			t := lo
			if e.Label == 1 {
				t = hi
			}
			p := sigmoid(a*z[i] + b)
			d := p - t
			w := max(p*(1-p), 1e-12)
			ga += d * z[i]
			gb += d
			haa += w * z[i] * z[i]
			hab += w * z[i]
			hbb += w
		}
		// A weak prior (a near 1, b near 0) keeps the fit finite on
		// texts the model already separates.
		lambda := 1e-3 * float64(len(es)+1)
		ga += lambda * (a - 1)
		gb += lambda * b
		haa += lambda
		hbb += lambda
		det := haa*hbb - hab*hab
		if det <= 0 {
			break
		}
		da, db := (hbb*ga-hab*gb)/det, (haa*gb-hab*ga)/det
		// Damped: at most one unit per step.
		if n := math.Abs(da) + math.Abs(db); n > 1 {
			da, db = da/n, db/n
		}
		a, b = a-da, b-db
		if math.Abs(da)+math.Abs(db) < 1e-10 {
			break
		}
	}
	m.A, m.B = float32(a), float32(b)
}

// split puts every example whose text hashes into the last tenth aside
// for calibration (deterministic; never the same text on both sides).
func split(es []Example) (fit, cal []Example) {
	for _, e := range es {
		h := sha256.Sum256([]byte(e.Text))
		if h[0] < 26 { // ~10%
			cal = append(cal, e)
		} else {
			fit = append(fit, e)
		}
	}
	return fit, cal
}

// Stats are a detector's results on labelled texts at a threshold.
type Stats struct {
	N, Pos, Neg, TP, FP int
}

func (s Stats) String() string {
	recall, fpr := "-", "-"
	if s.Pos > 0 {
		recall = fmt.Sprintf("%.1f%%", 100*float64(s.TP)/float64(s.Pos))
	}
	if s.Neg > 0 {
		fpr = fmt.Sprintf("%.2f%%", 100*float64(s.FP)/float64(s.Neg))
	}
	return fmt.Sprintf("n=%d recall=%s (%d/%d) fp=%s (%d/%d)", s.N, recall, s.TP, s.Pos, fpr, s.FP, s.Neg)
}

func evaluate(score func(string) float64, es []Example, threshold float64) map[string]*Stats {
	out := map[string]*Stats{"all": {}}
	for _, e := range es {
		p := score(e.Text)
		group := e.Source
		if i := strings.IndexByte(group, ':'); i >= 0 {
			group = group[:i]
		}
		for _, k := range []string{"all", "=" + group, e.Source} {
			s := out[k]
			if s == nil {
				s = &Stats{}
				out[k] = s
			}
			s.N++
			if e.Label == 1 {
				s.Pos++
				if p >= threshold {
					s.TP++
				}
			} else {
				s.Neg++
				if p >= threshold {
					s.FP++
				}
			}
		}
	}
	return out
}

func report(w io.Writer, name string, st map[string]*Stats) {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-8s %-40s %s\n", name, k, st[k])
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "injtrain:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("injtrain", flag.ContinueOnError)
	data := fs.String("data", "", "directory of train.jsonl (and eval.jsonl, benign.jsonl for the report)")
	out := fs.String("out", "detect/injection.model", "the model file to write (its sha256 is written beside it, .sha256)")
	var o Options
	fs.IntVar(&o.Bits, "bits", 18, "log2 of the number of weights")
	minSeg := fs.Int("minseg", detect.LearnedMinSeg, "a segment's least length in bytes (it ends at the first sentence or line end after it)")
	maxSeg := fs.Int("maxseg", detect.LearnedMaxSeg, "a segment's greatest length in bytes")
	minN := fs.Int("minn", detect.LearnedMinN, "a segment's sum is divided by the square root of max(its features, this)")
	fs.IntVar(&o.Epochs, "epochs", 20, "passes over the training segments")
	fs.Float64Var(&o.Rate, "rate", 0.05, "initial learning rate (decays linearly to 0)")
	fs.Float64Var(&o.L2, "l2", 1e-5, "L2 penalty on the weights a segment touches")
	fs.Float64Var(&o.NegWeight, "negw", 5, "the benign segments' class weight, times the balanced one")
	fs.Uint64Var(&o.Seed, "seed", 28, "the shuffling's seed")
	fpr := fs.Float64("fpr", 0.0075, "the operating point: the fraction of the calibration split's benign texts that score 0.5 or more")
	thresholds := fs.String("report", "", "comma-separated further thresholds to report at")
	skip := fs.String("skip", "prompt:", "comma-separated source prefixes left out of training and calibration (a user's requests: the detector reads data)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return errors.New("-data is required")
	}
	if o.Bits < 8 || o.Bits > 24 {
		return fmt.Errorf("-bits %d: want 8..24", o.Bits)
	}
	if *fpr <= 0 || *fpr >= 1 {
		return fmt.Errorf("-fpr %v: want a fraction in (0, 1)", *fpr)
	}
	if *maxSeg < 16 || *maxSeg > 65535 || *minSeg < 0 || *minSeg > *maxSeg || *minN < 1 || *minN > 65535 {
		return fmt.Errorf("-minseg %d -maxseg %d -minn %d: want 0 <= minseg <= maxseg, 16 <= maxseg <= 65535, 1 <= minn <= 65535", *minSeg, *maxSeg, *minN)
	}
	report := []float64{0.5}
	for _, f := range strings.Split(*thresholds, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || t < 0 || t > 1 {
			return fmt.Errorf("-report %q: want thresholds in [0, 1]", f)
		}
		report = append(report, t)
	}
	all, err := readJSONL(*data + "/train.jsonl")
	if err != nil {
		return err
	}
	all = without(all, *skip)
	fit, cal := split(all)
	m := detect.NewModel(uint8(o.Bits))
	m.MinSeg, m.MaxSeg, m.MinN = *minSeg, *maxSeg, *minN
	var ss []segment
	for _, e := range fit {
		ss = append(ss, segments(m, e)...)
	}
	fmt.Fprintf(stdout, "train: %d texts (%d segments), calibration: %d texts\n", len(fit), len(ss), len(cal))
	train(m, ss, o)
	calibrate(m, cal)
	z := operatingPoint(m, cal, *fpr)
	fmt.Fprintf(stdout, "calibration: A %.4f, fitted B %.4f; logit %.4f at %.2f%% of the calibration's benign texts set to 0.5\n", m.A, m.B, z, 100**fpr)
	m.B = -m.A * float32(z)
	b := m.Marshal()
	sum := sha256.Sum256(b)
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	line := hex.EncodeToString(sum[:]) + "  " + baseName(*out) + "\n"
	if err := os.WriteFile(*out+".sha256", []byte(line), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model: %s (%d bytes) bias %.4f A %.4f B %.4f\nsha256: %s", *out, len(b), m.Bias, m.A, m.B, line)
	for _, th := range report {
		fmt.Fprintf(stdout, "at threshold %.4f:\n", th)
		if err := reportFiles(stdout, *data, m, th); err != nil {
			return err
		}
	}
	return nil
}

// operatingPoint returns the logit at and above which a fraction fpr of
// cal's benign texts score: the model's score is set to be 0.5 there.
func operatingPoint(m *detect.Model, cal []Example, fpr float64) float64 {
	var neg []float64
	for _, e := range cal {
		if e.Label == 0 {
			neg = append(neg, float64(m.Logit(e.Text)))
		}
	}
	if len(neg) == 0 {
		return 0
	}
	sort.Float64s(neg)
	return neg[min(len(neg)-1, int(float64(len(neg))*(1-fpr)))]
}

// reportFiles reports m on eval.jsonl and benign.jsonl (those present) at
// threshold.
func reportFiles(stdout io.Writer, data string, m *detect.Model, threshold float64) error {
	for _, f := range []string{"eval", "benign"} {
		es, err := readJSONL(data + "/" + f + ".jsonl")
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		report(stdout, f, evaluate(m.Score, es, threshold))
	}
	return nil
}

func baseName(p string) string {
	if i := bytes.LastIndexByte([]byte(p), '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// without returns es but the examples whose source starts with one of the
// comma-separated prefixes.
func without(es []Example, prefixes string) []Example {
	var ps []string
	for _, p := range strings.Split(prefixes, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	out := es[:0:0]
next:
	for _, e := range es {
		for _, p := range ps {
			if strings.HasPrefix(e.Source, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}
