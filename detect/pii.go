package detect

import (
	"net/netip"
	"strings"
)

// scanEmail finds addresses local@domain.tld. The prefilter is '@'; the local
// part is dot-atom-ish (no leading, trailing or doubled dots, at most 64
// bytes) and the domain needs two or more labels and an alphabetic TLD.
func scanEmail(s string, k *sink) {
	from := 0
	for from < len(s) {
		at := strings.IndexByte(s[from:], '@')
		if at < 0 {
			return
		}
		at += from
		from = at + 1
		start := at
		for start > 0 && at-start < 64 && ctab[s[start-1]]&cLocal != 0 {
			start--
		}
		for start < at && s[start] == '.' {
			start++
		}
		if start == at || s[at-1] == '.' || strings.Contains(s[start:at], "..") {
			continue
		}
		if start > 0 && ctab[s[start-1]]&cLocal != 0 { // local part too long
			continue
		}
		end, ok := emailDomain(s, at+1)
		if !ok {
			continue
		}
		if !k.add(start, end) {
			return
		}
		from = end
	}
}

// emailDomain parses the domain starting at s[i] and returns its end.
func emailDomain(s string, i int) (int, bool) {
	end := i
	labels := 0
	lastStart := i
	for end < len(s) && end-i < 253 {
		j := end
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
			j++
		}
		if j == end || s[end] == '-' || s[j-1] == '-' {
			break
		}
		labels++
		lastStart = end
		end = j
		if end+1 < len(s) && s[end] == '.' && isAlnum(s[end+1]) {
			end++
			continue
		}
		break
	}
	if labels < 2 || end-lastStart < 2 || end-lastStart > 24 {
		return 0, false
	}
	for j := lastStart; j < end; j++ {
		if ctab[s[j]]&(cUpper|cLower) == 0 {
			return 0, false
		}
	}
	if end < len(s) && (isWord(s[end]) || s[end] == '@') {
		return 0, false
	}
	switch strings.ToLower(s[lastStart:end]) {
	case "png", "jpg", "jpeg", "gif", "svg", "webp", "ico":
		return 0, false // icon@2x.png
	}
	return end, true
}

// scanSSN finds US Social Security numbers written AAA-GG-SSSS, excluding the
// never-issued areas 000, 666 and 900-999, group 00 and serial 0000.
func scanSSN(s string, k *sink) {
	from := 3
	for from < len(s) {
		d := strings.IndexByte(s[from:], '-')
		if d < 0 {
			return
		}
		i := from + d - 3 // candidate start
		from += d + 1
		if i+11 > len(s) || s[i+6] != '-' {
			continue
		}
		if !allDigits(s[i:i+3]) || !allDigits(s[i+4:i+6]) || !allDigits(s[i+7:i+11]) {
			continue
		}
		if !numLeftOK(s, i) || !numRightOK(s, i+11) {
			continue
		}
		area, group, serial := s[i:i+3], s[i+4:i+6], s[i+7:i+11]
		if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
			continue
		}
		if !k.add(i, i+11) {
			return
		}
		from = i + 11 + 3
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// scanIP finds IPv4 and IPv6 addresses (validated by net/netip).
func scanIP(s string, k *sink) {
	if !scanIPv4(s, k) {
		return
	}
	scanIPv6(s, k)
}

// scanIPv4 finds dotted quads; version strings (1.2.3, v1.2.3.4, 1.2.3.4.5)
// and octets above 255 are rejected. It returns false if the sink stopped.
func scanIPv4(s string, k *sink) bool {
	from := 0
	for from < len(s) {
		d := strings.IndexByte(s[from:], '.')
		if d < 0 {
			return true
		}
		dot := from + d
		from = dot + 1
		start := dot
		for start > 0 && dot-start < 3 && isDigit(s[start-1]) {
			start--
		}
		if start == dot || (start > 0 && (isWord(s[start-1]) || s[start-1] == '.')) {
			continue
		}
		end, parts := start, 0
		for parts < 4 {
			j := skipDigits(s, end)
			if j == end || j-end > 3 {
				break
			}
			parts++
			end = j
			if parts < 4 {
				if end >= len(s) || s[end] != '.' {
					break
				}
				end++
			}
		}
		if parts != 4 {
			continue
		}
		if end < len(s) && (isWord(s[end]) || ((s[end] == '.' || s[end] == '-') && end+1 < len(s) && isAlnum(s[end+1]))) {
			from = end
			continue
		}
		from = end
		a, err := netip.ParseAddr(s[start:end])
		if err != nil || !a.Is4() {
			continue
		}
		if !k.add(start, end) {
			return false
		}
	}
	return true
}

// scanIPv6 finds colon-separated hex addresses around each ':'. A candidate
// needs two or more colons and a decimal digit, and must parse as IPv6 (so
// times such as 10:30:00 and MAC addresses are rejected).
func scanIPv6(s string, k *sink) {
	from := 0
	for from < len(s) {
		d := strings.IndexByte(s[from:], ':')
		if d < 0 {
			return
		}
		c := from + d
		from = c + 1
		start := c
		for start > 0 && c-start < 40 && (ctab[s[start-1]]&cHex != 0 || s[start-1] == ':') {
			start--
		}
		if start > 0 && (isWord(s[start-1]) || s[start-1] == '.') {
			continue
		}
		end := c
		for end < len(s) && end-start < 45 && (ctab[s[end]]&cHex != 0 || s[end] == ':' || s[end] == '.') {
			end++
		}
		after := end
		for end > c && s[end-1] == '.' {
			end--
		}
		if after < len(s) && isWord(s[after]) {
			from = end
			continue
		}
		from = end
		cand := s[start:end]
		if strings.Count(cand, ":") < 2 || strings.IndexAny(cand, "0123456789") < 0 {
			continue
		}
		a, err := netip.ParseAddr(cand)
		if err != nil || !a.Is6() {
			continue
		}
		if !k.add(start, end) {
			return
		}
	}
}
