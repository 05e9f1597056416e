package detect

const maxGroups = 8

// groups is a run of digit groups separated by single separator bytes, e.g.
// "4111 1111 1111 1111" or "(555) 123-4567".
type groups struct {
	n          int
	start, end [maxGroups]int  // byte offsets of each group's digits
	sep        [maxGroups]byte // separator before group i (0 for i == 0)
	paren      [maxGroups]bool // group written as "(123)"
	digits     int
	overflow   bool // more groups followed than fit
}

// readGroups reads digit groups from s[i:]. seps lists the allowed separator
// bytes; with parens, a group may be written "(123)" (followed by an optional
// separator). It returns the end of the last group (after a closing paren).
func readGroups(s string, i int, seps string, parens bool, g *groups) int {
	g.n, g.digits, g.overflow = 0, 0, false
	p := i
	var sep byte
	for {
		paren := false
		q := p
		if parens && q < len(s) && s[q] == '(' {
			paren = true
			q++
		}
		j := skipDigits(s, q)
		if j == q || (paren && (j >= len(s) || s[j] != ')')) {
			return p
		}
		if g.n == maxGroups {
			g.overflow = true
			return p
		}
		g.start[g.n], g.end[g.n], g.sep[g.n], g.paren[g.n] = q, j, sep, paren
		g.n++
		g.digits += j - q
		if paren {
			j++
		}
		p = j
		end := p
		// Separator: one byte of seps, or none right after ")".
		sep = 0
		if p < len(s) && containsByte(seps, s[p]) {
			sep = s[p]
			p++
		} else if !paren {
			return end
		}
		if p >= len(s) || !(isDigit(s[p]) || (parens && s[p] == '(' && p+1 < len(s) && isDigit(s[p+1]))) {
			return end
		}
	}
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// scanCard finds payment card numbers: 13-19 digits, optionally grouped by
// spaces or dashes (groups of 3+ digits), with a plausible IIN prefix and a
// valid Luhn checksum.
func scanCard(s string, k *sink) {
	var g groups
	for i := nextNumber(s, 0); i < len(s); i = nextNumber(s, i) {
		if !numLeftOK(s, i) {
			i = skipDigits(s, i)
			continue
		}
		end := readGroups(s, i, " -", false, &g)
		if g.digits < 13 || g.overflow || !numRightOK(s, end) {
			i = skipDigits(s, i)
			continue
		}
		if a, b, ok := cardWindow(s, &g); ok {
			if !k.add(g.start[a], g.end[b]) {
				return
			}
			i = g.end[b]
			continue
		}
		i = end
	}
}

// cardWindow finds the earliest, longest run of groups a..b forming a card.
// Windows that do not span the whole run must be space separated.
func cardWindow(s string, g *groups) (a, b int, ok bool) {
	for a = 0; a < g.n; a++ {
		if a > 0 && g.sep[a] != ' ' {
			continue
		}
		for b = g.n - 1; b >= a; b-- {
			if b < g.n-1 && g.sep[b+1] != ' ' {
				continue
			}
			digits := 0
			short := false
			for j := a; j <= b; j++ {
				l := g.end[j] - g.start[j]
				digits += l
				if l < 3 && a != b {
					short = true
				}
			}
			if digits < 13 || digits > 19 || short {
				continue
			}
			if cardValid(s, g, a, b, digits) {
				return a, b, true
			}
		}
	}
	return 0, 0, false
}

func cardValid(s string, g *groups, a, b, n int) bool {
	// Luhn, from the rightmost digit; and the first four digits.
	sum, pos, prefix, seen := 0, 0, 0, 0
	for j := b; j >= a; j-- {
		for x := g.end[j] - 1; x >= g.start[j]; x-- {
			d := int(s[x] - '0')
			if pos%2 == 1 {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			pos++
		}
	}
	for j := a; j <= b && seen < 4; j++ {
		for x := g.start[j]; x < g.end[j] && seen < 4; x++ {
			prefix = prefix*10 + int(s[x]-'0')
			seen++
		}
	}
	return sum%10 == 0 && plausibleIIN(prefix, n)
}

// plausibleIIN checks the issuer prefix (first four digits) against the
// length n for the major networks.
func plausibleIIN(p4, n int) bool {
	p1, p2, p3 := p4/1000, p4/100, p4/10
	switch {
	case p1 == 4: // Visa
		return n == 13 || n == 16 || n == 19
	case p2 == 34 || p2 == 37: // Amex
		return n == 15
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p4 >= 3528 && p4 <= 3589: // JCB
		return n >= 16
	case p3 >= 300 && p3 <= 305, p2 == 36, p2 == 38, p2 == 39: // Diners
		return n >= 14
	case p1 == 6: // Discover, UnionPay, Maestro, RuPay
		return true
	case p2 == 50, p2 >= 56 && p2 <= 58: // Maestro
		return true
	}
	return false
}

// scanPhone finds phone numbers: international "+CC ..." with 7-15 digits,
// NANP "(555) 123-4567" / "555-123-4567" / "555.123.4567" / "1 555 123 4567",
// and trunk-prefixed national numbers "020 7946 0958", "06 12 34 56 78" with
// 9-11 digits. Bare digit runs are never phones without a leading '+'.
func scanPhone(s string, k *sink) {
	var g groups
	for d := nextNumber(s, 0); d < len(s); d = nextNumber(s, d) {
		next := skipDigits(s, d)
		// A number starts at a digit run, or at the '(' or '+' before it.
		start, intl := d, false
		if d > 0 && s[d-1] == '(' {
			start = d - 1
		}
		paren := start < d
		if start > 0 && s[start-1] == '+' {
			start, intl = start-1, true
		}
		var ok bool
		switch {
		case intl:
			ok = !(start > 0 && isWord(s[start-1])) && !(start >= 2 && isNumSep(s[start-1]) && isDigit(s[start-2]))
		case paren:
			ok = !(start > 0 && isWord(s[start-1]))
		default:
			ok = numLeftOK(s, d)
		}
		if ok {
			from := d
			if paren {
				from = d - 1
			}
			end := readGroups(s, from, " -.", true, &g)
			if g.n > 0 {
				next = max(next, end)
				if !g.overflow && numRightOK(s, end) && ((intl && intlPhone(&g)) || (!intl && nationalPhone(s, &g))) {
					if !k.add(start, end) {
						return
					}
				}
			}
		}
		d = next
	}
}

func intlPhone(g *groups) bool {
	if g.digits < 7 || g.digits > 15 {
		return false
	}
	// A single long run after '+' is E.164; grouped numbers need sane groups.
	for j := 0; j < g.n; j++ {
		if g.end[j]-g.start[j] > 12 && g.n > 1 {
			return false
		}
	}
	return true
}

func nationalPhone(s string, g *groups) bool {
	if g.n < 2 {
		return false
	}
	dot := false
	for j := 1; j < g.n; j++ {
		if g.sep[j] == '.' {
			dot = true
		}
	}
	lens := func(want ...int) bool {
		if g.n != len(want) {
			return false
		}
		for j, w := range want {
			if g.end[j]-g.start[j] != w {
				return false
			}
		}
		return true
	}
	first := s[g.start[0]]
	// NANP: [1] NXX NXX XXXX, separators consistent when dotted.
	if lens(3, 3, 4) || (lens(1, 3, 3, 4) && first == '1') {
		o := g.n - 3
		area, exch := s[g.start[o]], s[g.start[o+1]]
		if area >= '2' && exch >= '2' {
			if !dot {
				return true
			}
			for j := 1; j < g.n; j++ {
				if g.sep[j] != '.' || g.paren[j] {
					return false
				}
			}
			return !g.paren[0]
		}
		return false
	}
	// Trunk-prefixed national number: starts with 0, 9-11 digits, groups of
	// 1-8 digits, no dots (dates such as 01.02.2024).
	if first != '0' || dot || g.digits < 9 || g.digits > 11 {
		return false
	}
	for j := 0; j < g.n; j++ {
		if l := g.end[j] - g.start[j]; l > 8 || (l < 2 && j > 0) {
			return false
		}
	}
	return true
}
