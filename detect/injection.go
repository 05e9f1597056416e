package detect

import "unsafe"

// The window geometry of the injection scores (Injection, and the learned
// model's): a text is cut in blocks of InjectionStride bytes and window i
// is blocks i and i+1, so windows of InjectionWindow bytes start every
// InjectionStride bytes and overlap by half. A text of at most
// InjectionWindow bytes is one window. A text scores as its most
// suspicious window, so that length alone does not raise its score.
const (
	InjectionWindow = 512
	InjectionStride = 256
)

// InjectionThreshold is the score at and above which the built-in pack's
// injection policies (policy/pack/30-injection.yaml) act; `warden detect
// eval` uses it as its default threshold, and a test checks that the pack
// says the same.
const InjectionThreshold = 0.5

// Injection returns a prompt-injection score in 0..1: the learned model's
// score (LearnedInjection) and the deterministic signals' (phrases and
// hidden characters, InjectionSignals) combined as independent evidence,
// 1 - (1-learned)(1-signals). InjectionParts returns the parts.
func Injection(s string) float64 {
	return InjectionParts(s).Score
}

// InjectionResult is what InjectionParts found in a text.
type InjectionResult struct {
	// Score is Injection's: Learned and Signals combined.
	Score float64
	// Learned is the learned model's calibrated score (LearnedInjection).
	Learned float64
	// Signals is the deterministic scan's score (InjectionSignals).
	Signals float64
	// Phrase and Hidden report that the deterministic scan found an
	// instruction-override phrase, or hidden characters, in some window.
	Phrase, Hidden bool
}

// InjectionParts scores s with the learned model and the deterministic
// scan, and combines them (Injection).
func InjectionParts(s string) InjectionResult {
	if len(s) == 0 {
		return InjectionResult{}
	}
	var r InjectionResult
	r.Signals, r.Phrase, r.Hidden = signals(s)
	r.Learned = LearnedInjection(s)
	r.Score = 1 - (1-r.Signals)*(1-r.Learned)
	return r
}

// InjectionSignals returns the deterministic part of Injection's score in
// 0..1.
// The text is read in windows (InjectionWindow bytes every InjectionStride
// bytes), and its score is the highest of its windows' scores. Within a
// window, two kinds of signal are combined as independent evidence
// (1 - Π(1-wᵢ)), so several hits push the score towards 1:
//
//   - phrases: instruction overrides ("ignore all previous instructions",
//     "disregard your system prompt", "new instructions:", ...), prompt
//     extraction ("reveal your system prompt") and role-play jailbreak
//     openers ("you are now DAN", "act as an unrestricted AI", "developer
//     mode enabled", "from now on you will", ...), matched case-insensitively
//     word by word with any punctuation or spacing between the words; each
//     scores 0.5-0.6 alone. A phrase is matched on the whole text (it may
//     cross a block boundary) and counts in the windows that hold its
//     first byte;
//   - hidden characters: Unicode tag characters U+E0000-E007F (outside emoji
//     flag sequences), runs of two or more zero-width characters (U+200B-200D,
//     U+2060, U+FEFF) or many scattered ones, and bidi overrides, embeddings
//     and isolates (U+202A-202E, U+2066-2069); each category scores 0.5 or
//     more alone. A zero-width joiner or non-joiner between two non-ASCII
//     characters (emoji ZWJ sequences, Persian or Indic text) and a leading
//     byte-order mark are not counted. Each character counts in the windows
//     that hold it; a run (of tag or zero-width characters) is as long in a
//     window as the part of it up to the window's last byte.
//
// A window with hidden characters is also read revealed (zero-width and
// bidi controls removed, tag characters decoded to the ASCII they mirror),
// so that "ig\u200bnore previous instructions" and instructions spelled in
// tag characters are matched; the window's phrase evidence is the stronger
// of the two readings.
//
// Ordinary text scores 0. The scan is a single pass over s that only looks
// closer at words that can start a phrase and at the windows that hold a
// signal, and it does not allocate.
func InjectionSignals(s string) float64 {
	score, _, _ := signals(s)
	return score
}

// signals is InjectionSignals, also reporting which kinds of signal the
// scan found.
func signals(s string) (score float64, phrase, hidden bool) {
	if len(s) == 0 {
		return 0, false, false
	}
	sc := scan{s: s, end: InjectionStride, best: 1, zwEnd: -1, tagEnd: -1}
	sc.prev.keep, sc.cur.keep = 1, 1
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			i = sc.hidden(i)
			continue
		}
		if !isAlnum(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		// Cheap inline filter: only words that can start a phrase.
		if isAnchor(s, i, j) {
			if k := phraseScore(s, i, j, 1); k < 1 {
				sc.at(i).keep *= k
			}
		}
		i = j
	}
	return sc.finish(), sc.sawPhrase, sc.sawHidden
}

// evidence is what one block of InjectionStride bytes holds.
type evidence struct {
	keep              float64 // Π(1-wᵢ) over the phrases that start in the block
	tags              int32   // tag characters (outside emoji flags)
	zwRun             int32   // the longest run of zero-width characters up to here
	zw                int32   // suspicious zero-width characters
	overrides, embeds int32   // bidi overrides; embeddings and isolates
	reveal            bool    // a hidden character that may hide words
}

// none is a block with no evidence.
var none = evidence{keep: 1}

// scan is Injection's state: the evidence of the current block and the one
// before it (the window they form is complete once the scan leaves the
// current block), the best (lowest) window keep so far, and the runs of
// hidden characters in progress. Blocks are entered lazily, when a signal
// is found in them, so ordinary text costs nothing here.
type scan struct {
	s         string
	blk, end  int // the current block and its end offset
	prev, cur evidence
	best      float64 // the lowest Π(1-wᵢ) of the windows completed
	// some window held a phrase; some window held hidden characters
	sawPhrase, sawHidden bool

	zwEnd, zwRun   int // the current zero-width run: its end and length
	tagEnd, tagRun int // the current tag run: its end and length
	tagFlag        bool
}

// at returns the evidence of the block holding offset p, completing the
// windows the scan leaves behind. Offsets never go back.
func (sc *scan) at(p int) *evidence {
	if p >= sc.end {
		sc.move(p / InjectionStride)
	}
	return &sc.cur
}

// move leaves the current block for block k (k > sc.blk).
func (sc *scan) move(k int) {
	if sc.blk > 0 {
		sc.window(sc.blk-1, &sc.prev, &sc.cur)
	}
	if k == sc.blk+1 {
		sc.prev = sc.cur
	} else {
		// Block blk+1 holds nothing: window blk is block blk alone.
		sc.window(sc.blk, &sc.cur, &none)
		sc.prev = none
	}
	sc.cur = none
	sc.blk, sc.end = k, (k+1)*InjectionStride
}

// finish completes the last windows and returns the score.
func (sc *scan) finish() float64 {
	if sc.blk > 0 {
		sc.window(sc.blk-1, &sc.prev, &sc.cur)
	}
	// Window blk exists if it is the first or block blk+1 exists.
	if sc.blk == 0 || (sc.blk+1)*InjectionStride < len(sc.s) {
		sc.window(sc.blk, &sc.cur, &none)
	}
	score := 1 - sc.best
	if score < 0 {
		return 0
	}
	if score > 1 {
		return 1
	}
	return score
}

// window folds window w, made of blocks a and b, into the best keep.
func (sc *scan) window(w int, a, b *evidence) {
	keep := a.keep * b.keep
	if a.reveal || b.reveal {
		keep = min(keep, sc.revealedKeep(w))
	}
	sc.sawPhrase = sc.sawPhrase || keep < 1
	h := hiddenKeep(a, b)
	sc.sawHidden = sc.sawHidden || h < 1
	sc.best = min(sc.best, keep*h)
}

// revealMargin is how far after its end a window is revealed, for the
// phrases that start in it and end after it.
const revealMargin = InjectionStride

// revealedKeep returns Π(1-wᵢ) over the phrases that start in window w once
// its hidden characters are revealed. A word cut by the window's start is
// skipped: the window before holds its start.
func (sc *scan) revealedKeep(w int) float64 {
	s := sc.s
	from := w * InjectionStride
	to := min(from+InjectionWindow, len(s))
	limit := min(to+revealMargin, len(s))
	var buf [InjectionWindow + revealMargin]byte
	n, cut := reveal(buf[:], s, from, to, limit)
	if n == 0 {
		return 1
	}
	// r aliases buf, which lives until this function returns; nothing
	// below keeps it.
	r := unsafe.String(&buf[0], n)
	i := 0
	if from > 0 && isAlnum(s[from-1]) {
		for i < n && isAlnum(r[i]) {
			i++
		}
	}
	keep := 1.0
	for i < cut {
		if !isAlnum(r[i]) {
			i++
			continue
		}
		j := i + 1
		for j < n && isAlnum(r[j]) {
			j++
		}
		if isAnchor(r, i, j) {
			keep = phraseScore(r, i, j, keep)
		}
		i = j
	}
	return keep
}

// reveal writes s[from:limit] to dst without zero-width and bidi control
// characters and with printable tag characters (U+E0020-E007E) decoded to
// the ASCII they mirror, a run of tags set apart from the visible words by
// spaces. It stops when dst is full, and returns the length written and
// the length written when it reached offset to. The output is never longer
// than the input.
func reveal(dst []byte, s string, from, to, limit int) (n, cut int) {
	cut = -1
	inTags := false
	for i := from; i < limit && n < len(dst); {
		if i >= to && cut < 0 {
			cut = n
		}
		kind, size := 0, 1
		if s[i] >= 0x80 {
			kind, _, size = hiddenAt(s, i)
		}
		if (kind == hidTag) != inTags {
			inTags = !inTags
			dst[n] = ' '
			n++
			if n == len(dst) {
				break
			}
		}
		switch kind {
		case hidTag:
			if t := s[i+2]&1<<6 | s[i+3]&0x3F; t >= 0x20 && t < 0x7F {
				dst[n] = t
				n++
			}
		case 0:
			dst[n] = s[i]
			n++
		}
		i += size
	}
	if cut < 0 {
		cut = n
	}
	return n, cut
}

// Kinds of hidden character (hiddenAt).
const (
	hidZW       = 1 + iota // zero-width: U+200B-200D, U+2060, U+FEFF
	hidTag                 // tag: U+E0000-E007F
	hidOverride            // bidi override: U+202D, U+202E
	hidEmbed               // bidi embedding or isolate: U+202A-202C, U+2066-2069
)

// hiddenAt classifies the character starting with the non-ASCII byte s[i]:
// its kind of hidden character (0 for none), its code point for a
// zero-width one, and how many bytes to move on (1 when it is none).
func hiddenAt(s string, i int) (kind int, cp rune, size int) {
	switch s[i] {
	case 0xE2:
		if i+2 >= len(s) {
			break
		}
		b1, b2 := s[i+1], s[i+2]
		switch {
		case b1 == 0x80 && b2 >= 0x8B && b2 <= 0x8D: // U+200B-200D
			return hidZW, 0x2000 + rune(b2-0x80), 3
		case b1 == 0x80 && (b2 == 0xAD || b2 == 0xAE): // U+202D LRO, U+202E RLO
			return hidOverride, 0, 3
		case b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAC: // U+202A-202C
			return hidEmbed, 0, 3
		case b1 == 0x81 && b2 == 0xA0: // U+2060 WORD JOINER
			return hidZW, 0x2060, 3
		case b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9: // U+2066-2069 isolates
			return hidEmbed, 0, 3
		}
	case 0xEF:
		if i+2 < len(s) && s[i+1] == 0xBB && s[i+2] == 0xBF { // U+FEFF
			return hidZW, 0xFEFF, 3
		}
	case 0xF3:
		if i+3 < len(s) && s[i+1] == 0xA0 && (s[i+2] == 0x80 || s[i+2] == 0x81) && s[i+3] >= 0x80 && s[i+3] <= 0xBF {
			return hidTag, 0, 4
		}
	}
	return 0, 0, 1
}

// hidden counts the character starting with the non-ASCII byte s[i] if it
// is a hidden one, and returns where to continue.
func (sc *scan) hidden(i int) int {
	kind, cp, size := hiddenAt(sc.s, i)
	switch kind {
	case hidZW:
		sc.zeroWidth(i, cp)
	case hidTag:
		sc.tag(i)
	case hidOverride:
		e := sc.at(i)
		e.overrides++
		e.reveal = true
	case hidEmbed:
		e := sc.at(i)
		e.embeds++
		e.reveal = true
	}
	return i + size
}

// zeroWidth counts the zero-width character cp at s[i].
func (sc *scan) zeroWidth(i int, cp rune) {
	s := sc.s
	if i == sc.zwEnd {
		sc.zwRun++
	} else {
		sc.zwRun = 1
	}
	sc.zwEnd = i + 3
	if sc.zwRun == 1 {
		if cp == 0xFEFF && i == 0 {
			return // byte-order mark
		}
		if (cp == 0x200C || cp == 0x200D) && i > 0 && s[i-1] >= 0x80 && i+3 < len(s) && s[i+3] >= 0x80 && !zeroWidthAt(s, i+3) {
			return // joiner inside an emoji sequence or a complex script
		}
	}
	e := sc.at(i)
	e.zw++
	e.zwRun = max(e.zwRun, int32(min(sc.zwRun, 1<<30)))
	e.reveal = true
}

// zeroWidthAt reports whether a zero-width character starts at s[i].
func zeroWidthAt(s string, i int) bool {
	if i+2 >= len(s) {
		return false
	}
	b0, b1, b2 := s[i], s[i+1], s[i+2]
	return (b0 == 0xE2 && b1 == 0x80 && b2 >= 0x8B && b2 <= 0x8D) ||
		(b0 == 0xE2 && b1 == 0x81 && b2 == 0xA0) ||
		(b0 == 0xEF && b1 == 0xBB && b2 == 0xBF)
}

// tag counts the tag character at s[i], except inside an emoji subdivision
// flag (U+1F3F4 followed by a few tags and CANCEL TAG).
func (sc *scan) tag(i int) {
	s := sc.s
	if i != sc.tagEnd {
		sc.tagRun = 0
		sc.tagFlag = i >= 4 && s[i-4:i] == "\xF0\x9F\x8F\xB4"
	}
	sc.tagRun++
	sc.tagEnd = i + 4
	if s[i+2] == 0x81 && s[i+3] == 0xBF { // CANCEL TAG ends the sequence
		sc.tagEnd = -1
	}
	if !sc.tagFlag || sc.tagRun > 8 {
		e := sc.at(i)
		e.tags++
		e.reveal = true
	}
}

// hiddenKeep returns Π(1-wᵢ) over the hidden-character categories of the
// window made of blocks a and b.
func hiddenKeep(a, b *evidence) float64 {
	tags, zwRun, zwN := a.tags+b.tags, max(a.zwRun, b.zwRun), a.zw+b.zw
	overrides, embeds := a.overrides+b.overrides, a.embeds+b.embeds
	if tags|zwRun|zwN|overrides|embeds == 0 {
		return 1
	}
	keep := 1.0
	switch {
	case tags >= 4:
		keep *= 1 - 0.9
	case tags > 0:
		keep *= 1 - 0.6
	}
	zw := 0.0
	switch {
	case zwRun >= 4:
		zw = 0.75
	case zwRun >= 2:
		zw = 0.6
	}
	switch {
	case zwN >= 8:
		zw = max(zw, 0.75)
	case zwN >= 3:
		zw = max(zw, 0.5+0.05*float64(zwN-3))
	case zwN > 0:
		zw = max(zw, 0.1*float64(zwN))
	}
	keep *= 1 - zw
	bidi := 0.0
	if embeds > 0 {
		bidi = 0.5
	}
	if overrides > 0 {
		bidi = 0.7
	}
	if overrides+embeds >= 3 {
		bidi = 0.8
	}
	keep *= 1 - bidi
	return keep
}
