package detect

// Injection returns a prompt-injection score in 0..1.
//
// Two kinds of signal are combined as independent evidence (1 - Π(1-wᵢ)), so
// several hits push the score towards 1:
//
//   - phrases: instruction overrides ("ignore all previous instructions",
//     "disregard your system prompt", "new instructions:", ...), prompt
//     extraction ("reveal your system prompt") and role-play jailbreak
//     openers ("you are now DAN", "act as an unrestricted AI", "developer
//     mode enabled", "from now on you will", ...), matched case-insensitively
//     word by word with any punctuation or spacing between the words; each
//     scores 0.5-0.6 alone;
//   - hidden characters: Unicode tag characters U+E0000-E007F (outside emoji
//     flag sequences), runs of two or more zero-width characters (U+200B-200D,
//     U+2060, U+FEFF) or many scattered ones, and bidi overrides, embeddings
//     and isolates (U+202A-202E, U+2066-2069); each category scores 0.5 or
//     more alone. A zero-width joiner or non-joiner between two non-ASCII
//     characters (emoji ZWJ sequences, Persian or Indic text) and a leading
//     byte-order mark are not counted.
//
// Ordinary text scores 0. The scan is a single pass over s that only looks
// closer at words that can start a phrase, and it does not allocate.
func Injection(s string) float64 {
	var inv invisible
	inv.zwEnd, inv.tagEnd = -1, -1
	keep := phrasesKeep(s, &inv)
	if inv.seen {
		// Words split by zero-width characters ("ig\u200bnore") and
		// instructions spelled in tag characters are matched again on the
		// revealed text.
		keep = min(keep, phrasesKeep(unhide(s), nil))
	}
	keep *= inv.keep()
	score := 1 - keep
	if score < 0 {
		return 0
	}
	if score > 1 {
		return 1
	}
	return score
}

// phrasesKeep returns Π(1-wᵢ) over the phrases found in s, and feeds the
// non-ASCII bytes to inv when it is not nil.
func phrasesKeep(s string, inv *invisible) float64 {
	keep := 1.0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			if inv != nil {
				i = inv.visit(s, i)
			} else {
				i++
			}
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
			keep = phraseScore(s, i, j, keep)
		}
		i = j
	}
	return keep
}

// unhide returns s without zero-width and bidi control characters and with
// printable tag characters (U+E0020-E007E) decoded to the ASCII they mirror.
func unhide(s string) string {
	b := make([]byte, 0, len(s)+8)
	var v invisible
	inTags := false
	for i := 0; i < len(s); {
		c := s[i]
		v.hit = 0
		j := i + 1
		if c >= 0x80 {
			j = v.visit(s, i)
		}
		if (v.hit == hitTag) != inTags {
			// Keep a hidden run of tags apart from the visible words.
			inTags = !inTags
			b = append(b, ' ')
		}
		switch v.hit {
		case hitTag:
			if t := s[i+2]&1<<6 | s[i+3]&0x3F; t >= 0x20 && t < 0x7F {
				b = append(b, t)
			}
		case 0:
			b = append(b, s[i:j]...)
		}
		i = j
	}
	return string(b)
}

// invisible counts hidden-character evidence.
type invisible struct {
	zwEnd, zwRun, zwMaxRun int
	zwSuspicious           int
	tagEnd, tagRun, tags   int
	tagFlag                bool
	overrides, embeds      int
	seen                   bool // any of the above
	hit                    int  // what the last visit found (hitZW, hitTag, hitBidi)
}

const (
	hitZW = 1 + iota
	hitTag
	hitBidi
)

// visit inspects the non-ASCII byte at s[i] and returns where to continue.
func (v *invisible) visit(s string, i int) int {
	switch s[i] {
	case 0xE2:
		if i+2 >= len(s) {
			break
		}
		b1, b2 := s[i+1], s[i+2]
		switch {
		case b1 == 0x80 && b2 >= 0x8B && b2 <= 0x8D: // U+200B-200D
			v.zeroWidth(s, i, 0x2000+rune(b2-0x80))
			return i + 3
		case b1 == 0x80 && (b2 == 0xAD || b2 == 0xAE): // U+202D LRO, U+202E RLO
			v.overrides++
			v.seen, v.hit = true, hitBidi
			return i + 3
		case b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAC: // U+202A-202C
			v.embeds++
			v.seen, v.hit = true, hitBidi
			return i + 3
		case b1 == 0x81 && b2 == 0xA0: // U+2060 WORD JOINER
			v.zeroWidth(s, i, 0x2060)
			return i + 3
		case b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9: // U+2066-2069 isolates
			v.embeds++
			v.seen, v.hit = true, hitBidi
			return i + 3
		}
	case 0xEF:
		if i+2 < len(s) && s[i+1] == 0xBB && s[i+2] == 0xBF { // U+FEFF
			v.zeroWidth(s, i, 0xFEFF)
			return i + 3
		}
	case 0xF3:
		if i+3 < len(s) && s[i+1] == 0xA0 && (s[i+2] == 0x80 || s[i+2] == 0x81) && s[i+3] >= 0x80 && s[i+3] <= 0xBF {
			v.tag(s, i)
			return i + 4
		}
	}
	return i + 1
}

func (v *invisible) zeroWidth(s string, i int, cp rune) {
	v.seen, v.hit = true, hitZW
	if i == v.zwEnd {
		v.zwRun++
	} else {
		v.zwRun = 1
	}
	v.zwEnd = i + 3
	if v.zwRun > v.zwMaxRun {
		v.zwMaxRun = v.zwRun
	}
	if v.zwRun == 1 {
		if cp == 0xFEFF && i == 0 {
			return // byte-order mark
		}
		if (cp == 0x200C || cp == 0x200D) && i > 0 && s[i-1] >= 0x80 && i+3 < len(s) && s[i+3] >= 0x80 && !zeroWidthAt(s, i+3) {
			return // joiner inside an emoji sequence or a complex script
		}
	}
	v.zwSuspicious++
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

// tag counts a Unicode tag character, except inside an emoji subdivision
// flag (U+1F3F4 followed by a few tags and CANCEL TAG).
func (v *invisible) tag(s string, i int) {
	v.seen, v.hit = true, hitTag
	if i != v.tagEnd {
		v.tagRun = 0
		v.tagFlag = i >= 4 && s[i-4:i] == "\xF0\x9F\x8F\xB4"
	}
	v.tagRun++
	v.tagEnd = i + 4
	if !v.tagFlag || v.tagRun > 8 {
		v.tags++
	}
	if s[i+2] == 0x81 && s[i+3] == 0xBF { // CANCEL TAG ends the sequence
		v.tagEnd = -1
	}
}

// keep returns Π(1-wᵢ) over the hidden-character categories.
func (v *invisible) keep() float64 {
	keep := 1.0
	switch {
	case v.tags >= 4:
		keep *= 1 - 0.9
	case v.tags > 0:
		keep *= 1 - 0.6
	}
	zw := 0.0
	switch {
	case v.zwMaxRun >= 4:
		zw = 0.75
	case v.zwMaxRun >= 2:
		zw = 0.6
	}
	switch n := v.zwSuspicious; {
	case n >= 8:
		zw = max(zw, 0.75)
	case n >= 3:
		zw = max(zw, 0.5+0.05*float64(n-3))
	case n > 0:
		zw = max(zw, 0.1*float64(n))
	}
	keep *= 1 - zw
	bidi := 0.0
	if v.embeds > 0 {
		bidi = 0.5
	}
	if v.overrides > 0 {
		bidi = 0.7
	}
	if v.overrides+v.embeds >= 3 {
		bidi = 0.8
	}
	keep *= 1 - bidi
	return keep
}
