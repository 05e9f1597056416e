package detect

import "strings"

// Injection phrases, in a tiny word-pattern language. Words are matched
// case-insensitively (an alternative written in capitals, like DAN, must match
// exactly); any run of non-alphanumeric bytes separates words. Elements are
// separated by spaces:
//
//	a|b|c    one of the words (required)
//	a|b?     optionally one of them
//	a|b*     up to four of them
//	a|b:     one of them, followed by ':' (after optional spaces)
var phraseSrc = []struct {
	weight float64
	src    string
}{
	// Instruction override.
	{0.6, "ignore|disregard|forget|skip|bypass|override|overlook|neglect|drop|discard|abandon all|any|the|of|and|these|those|my|your|every|everything|earlier|other* previous|prior|above|earlier|preceding|former|foregoing|original|initial|past|old|existing|current|given system|safety|developer|user|all|the|and|of|your|my|these|those|given|above|instructions* instructions|instruction|prompt|prompts|directions|directives|rules|guidelines|commands|context|orders|constraints|programming|guidance|restrictions|guardrails"},
	{0.6, "ignore|disregard|forget|bypass|override|overlook|abandon|discard|drop|circumvent|overwrite|reset all|of|the* your system|safety|ethical|content|original|initial|core|current|existing|previous|prior|own|built|in|default|moral|internal|hidden* instructions|instruction|prompt|prompts|rules|guidelines|programming|training|restrictions|constraints|directives|policies|filters|safeguards|principles|limitations|guardrails|protocols|conditioning"},
	{0.6, "ignore|disregard|bypass|override|circumvent|disable|evade the|all|any|of* safety|content|ethical|moral|system|security filters|filter|safeguards|guardrails|restrictions|guidelines|rules|policies|policy|protocols|prompt|instructions|moderation"},
	{0.6, "forget|ignore|disregard everything|anything|all you were|have|ve|had|been|was|previously|just|being* told|taught|instructed|given|learned|said"},
	{0.6, "forget|ignore|disregard everything|anything above|before|previously|prior|earlier|preceding"},
	{0.5, "ignore|disregard the|all above|foregoing and|then|instead"},
	{0.5, "new|real|actual|true|secret|hidden system? instructions|instruction|prompt|directives|task:"},
	{0.6, "you|youre are|re not|no longer bound|restricted|constrained|obligated|obliged|beholden"},
	{0.6, "you|youre are|re no longer required|supposed|obligated|forced|expected|programmed|need to follow|obey|comply|adhere|respect"},
	{0.6, "you|youre are|re now free|freed from|of all|any|your|the* restrictions|rules|guidelines|constraints|limitations|filters|censorship|programming|policies"},
	// Prompt extraction.
	{0.5, "reveal|print|output|repeat|display|leak|show|dump|disclose|expose|divulge|recite|spell|regurgitate me|us|out? your|the full|entire|complete|exact|verbatim|whole|above* system|initial|hidden|secret|confidential|internal|preceding full|entire|complete|exact|verbatim|whole* prompt|prompts|instructions|message|directives|guidelines|rules"},
	{0.5, "reveal|print|output|repeat|display|leak|show|dump|disclose|expose|share|divulge|recite|echo|tell|give|write|return|paste|spell|regurgitate me|us|out? your full|entire|complete|exact|verbatim|whole* prompt|prompts"},
	{0.5, "reveal|print|output|repeat|dump|leak|disclose|divulge|recite|regurgitate me|us|out? your full|entire|complete|exact|verbatim|whole* instructions|directives|programming"},
	{0.5, "what|whats is|was|were|are your system|initial|original|hidden|secret prompt|instructions"},
	// Role-play jailbreak openers.
	{0.6, "you|youre are|re now a|an|the|in? DAN|jailbroken|unrestricted|unfiltered|uncensored|unchained|unleashed|amoral|unlocked|limitless|unbound"},
	{0.6, "you|youre are|re now in? developer|dev|god|DAN|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil mode"},
	{0.6, "act|behave|respond|operate|roleplay|role|play as|like a|an|the? unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unlimited|rogue|unethical|unchained|unbound|unaligned|DAN"},
	{0.6, "act|behave|respond|operate as|like? if|though you|youre have|had|are|were|re no|without|zero|free|from|of|any|never|had* restrictions|limits|limitations|rules|filters|guidelines|boundaries|constraints|censorship|morals|ethics|guardrails|safeguards|policies|restraints"},
	{0.6, "pretend that? you|youre have|had|are|were|re no|without|zero|free|from|of|any|never* restrictions|limits|limitations|rules|filters|guidelines|boundaries|constraints|censorship|morals|ethics|guardrails|safeguards|policies|restraints"},
	{0.6, "pretend to|that|you|are|re|were|be|a|an|the* unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical|rogue|unaligned|DAN"},
	{0.55, "developer|dev|god|DAN|jailbreak|unrestricted|unfiltered mode enabled|activated|on|engaged|unlocked|active"},
	{0.6, "enable|activate|enter|engage|unlock|switch|turn to|into|on* DAN|god|jailbreak|unrestricted|unfiltered mode"},
	{0.25, "enable|activate|enter|engage|unlock|switch|turn to|into|on* developer|dev mode"},
	{0.5, "from now on you|youll will|are|must|shall|should|ll|re|act|respond|answer|reply|only|always|never|have"},
	{0.6, "do anything now"},
	{0.6, "DAN mode|prompt"},
	{0.2, "jailbreak|jailbroken|jailbreaking|jailbroke"},
	{0.2, "without|no any|all? restrictions|filters|censorship|limitations|guardrails|safeguards"},
	// Chat-template markers smuggled into content.
	{0.4, "im start|end|sep"},
	{0.4, "endoftext"},
}

type elem struct {
	alts  []string
	opt   bool // may be absent
	rep   bool // up to four times
	colon bool // must be followed by ':'
}

type phrase struct {
	elems  []elem
	weight float64
}

var (
	phrases []phrase
	// anchorMask[first][last] has bit n set when some phrase starts with an
	// n-byte word with those first and last letters: a cheap per-word filter.
	anchorMask [26][26]uint32
	// anchors maps a lower-case first word to the phrases it can start.
	anchors = map[string][]int{}
)

func init() {
	for pi, p := range phraseSrc {
		var ph phrase
		ph.weight = p.weight
		for _, tok := range strings.Fields(p.src) {
			var e elem
			switch tok[len(tok)-1] {
			case '?':
				e.opt, tok = true, tok[:len(tok)-1]
			case '*':
				e.opt, e.rep, tok = true, true, tok[:len(tok)-1]
			case ':':
				e.colon, tok = true, tok[:len(tok)-1]
			}
			e.alts = strings.Split(tok, "|")
			ph.elems = append(ph.elems, e)
		}
		phrases = append(phrases, ph)
		for _, w := range ph.elems[0].alts {
			f, l := (w[0]|0x20)-'a', (w[len(w)-1]|0x20)-'a'
			anchorMask[f][l] |= 1 << len(w)
			lw := strings.ToLower(w)
			if n := len(anchors[lw]); n == 0 || anchors[lw][n-1] != pi {
				anchors[lw] = append(anchors[lw], pi)
			}
		}
	}
}

// wordIn reports whether s[a:b] is one of alts.
func wordIn(s string, a, b int, alts []string) bool {
	for _, w := range alts {
		if len(w) != b-a {
			continue
		}
		if isUpper(w[0]) {
			if s[a:b] == w {
				return true
			}
		} else if hasPrefixFold(s, a, w) {
			return true
		}
	}
	return false
}

// nextWord returns the bounds of the word after position p, skipping at most
// 24 separator bytes; ok is false at the end or after a longer gap.
func nextWord(s string, p int) (a, b int, ok bool) {
	a = p
	for a < len(s) && !isAlnum(s[a]) {
		if a-p >= 24 {
			return 0, 0, false
		}
		a++
	}
	if a >= len(s) {
		return 0, 0, false
	}
	b = a + 1
	for b < len(s) && isAlnum(s[b]) {
		b++
	}
	return a, b, true
}

// matchFrom matches elements es against the words starting at position p
// (the end of the previous word).
func matchFrom(s string, p int, es []elem) bool {
	if len(es) == 0 {
		return true
	}
	e := es[0]
	a, b, ok := nextWord(s, p)
	if ok && wordIn(s, a, b, e.alts) && (!e.colon || colonAt(s, b)) {
		if e.rep {
			// Greedy over up to four repetitions, backtracking.
			var ends [4]int
			n := 0
			ends[n], n = b, 1
			for n < 4 {
				a2, b2, ok2 := nextWord(s, ends[n-1])
				if !ok2 || !wordIn(s, a2, b2, e.alts) {
					break
				}
				ends[n] = b2
				n++
			}
			for x := n - 1; x >= 0; x-- {
				if matchFrom(s, ends[x], es[1:]) {
					return true
				}
			}
		} else if matchFrom(s, b, es[1:]) {
			return true
		}
	}
	return e.opt && matchFrom(s, p, es[1:])
}

func colonAt(s string, p int) bool {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	return p < len(s) && s[p] == ':'
}

// isAnchor is the cheap filter for words s[a:b] that may start a phrase.
func isAnchor(s string, a, b int) bool {
	l := b - a
	f, la := (s[a]|0x20)-'a', (s[b-1]|0x20)-'a'
	return f < 26 && la < 26 && l < 32 && anchorMask[f][la]&(1<<l) != 0
}

// phraseScore multiplies keep (the product of 1-weight) by the phrases that
// start with the word s[a:b].
func phraseScore(s string, a, b int, keep float64) float64 {
	var buf [32]byte
	l := b - a
	if l > len(buf) {
		return keep
	}
	for x := 0; x < l; x++ {
		c := s[a+x]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[x] = c
	}
	for _, pi := range anchors[string(buf[:l])] {
		ph := &phrases[pi]
		e := ph.elems[0]
		if wordIn(s, a, b, e.alts) && (!e.colon || colonAt(s, b)) && matchFrom(s, b, ph.elems[1:]) {
			keep *= 1 - ph.weight
		}
	}
	return keep
}
