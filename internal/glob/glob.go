// Package glob matches names against the patterns policies and hooks
// write.
package glob

import "unicode/utf8"

// Match reports whether s matches pattern, where '*' matches any run of
// characters (including none, '/' and '.') and '?' exactly one character.
// Event names in policies and hook declarations are matched with it, and so
// is the policy function glob().
func Match(pattern, s string) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for sx < len(s) {
		if px < len(pattern) {
			switch pattern[px] {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[sx:])
				px++
				sx += n
				continue
			default:
				if pattern[px] == s[sx] {
					px++
					sx++
					continue
				}
			}
		}
		if starPx < 0 {
			return false
		}
		// Backtrack: let the last '*' swallow one more character.
		_, n := utf8.DecodeRuneInString(s[starSx:])
		starSx += n
		px, sx = starPx+1, starSx
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}
