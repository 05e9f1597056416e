package detect

// Byte classes used by the hand-written scanners.
const (
	cDigit  = 1 << iota // 0-9
	cUpper              // A-Z
	cLower              // a-z
	cHex                // 0-9 A-F a-f
	cB64URL             // A-Z a-z 0-9 - _
	cLocal              // email local part: alnum and . _ % + - ' ...
	cValue              // secret value: alnum and - _ + / = . ~
	cUnder              // '_'
)

var ctab [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		var v uint8
		switch {
		case c >= '0' && c <= '9':
			v |= cDigit | cHex
		case c >= 'A' && c <= 'Z':
			v |= cUpper
			if c <= 'F' {
				v |= cHex
			}
		case c >= 'a' && c <= 'z':
			v |= cLower
			if c <= 'f' {
				v |= cHex
			}
		}
		if v&(cDigit|cUpper|cLower) != 0 {
			v |= cB64URL | cLocal | cValue
		}
		switch c {
		case '-':
			v |= cB64URL | cLocal | cValue
		case '_':
			v |= cB64URL | cLocal | cValue | cUnder
		case '.', '+':
			v |= cLocal | cValue
		case '%', '\'':
			v |= cLocal
		case '/', '=', '~':
			v |= cValue
		}
		ctab[c] = v
	}
}

func isDigit(c byte) bool { return c-'0' < 10 }
func isUpper(c byte) bool { return c-'A' < 26 }
func isAlnum(c byte) bool { return ctab[c]&(cDigit|cUpper|cLower) != 0 }

// isWord reports an identifier byte: ASCII alnum or '_'.
func isWord(c byte) bool { return ctab[c]&(cDigit|cUpper|cLower|cUnder) != 0 }

// isNumSep reports punctuation that glues numbers together (dates, times,
// versions, decimals, ranges).
func isNumSep(c byte) bool {
	switch c {
	case '.', '-', '/', ':', ',', '+':
		return true
	}
	return false
}

// numLeftOK reports whether a number may start at s[i]: it must not continue
// a word or another number ("v2", "12/", "1.").
func numLeftOK(s string, i int) bool {
	if i == 0 {
		return true
	}
	p := s[i-1]
	if isWord(p) || p == '+' {
		return false
	}
	if i >= 2 {
		switch q := s[i-2]; p {
		case '.', '-', '/':
			return !isAlnum(q)
		case ':', ',':
			return !isDigit(q)
		}
	}
	return true
}

// numRightOK reports whether a number may end at s[j] (exclusive).
func numRightOK(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	c := s[j]
	if isWord(c) {
		return false
	}
	if isNumSep(c) && j+1 < len(s) && isAlnum(s[j+1]) {
		return false
	}
	return true
}

// skipDigits returns the index after the digit run starting at i.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// hasPrefixFold reports whether s[i:] starts with the lower-case ASCII word w,
// ignoring ASCII case.
func hasPrefixFold(s string, i int, w string) bool {
	if i < 0 || len(s)-i < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[i+j]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// nextNumber returns the index of the next digit at or after i (len(s) if
// none). It tests eight bytes at a time.
func nextNumber(s string, i int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		_ = b[7]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		// Bit-hack "hasbetween(x, '0'-1, '9'+1)": a byte of x lies in '0'..'9'.
		lo := x &^ high
		if (ones*(127+'9'+1)-lo)&^x&(lo+ones*(127-('0'-1)))&high != 0 {
			break
		}
	}
	for i < len(s) && !isDigit(s[i]) {
		i++
	}
	return i
}
