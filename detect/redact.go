package detect

import "strings"

// RedactedPrefix starts every replacement: "[REDACTED:<kind>]".
const RedactedPrefix = "[REDACTED:"

// maxRedactRounds bounds the re-scans Redact makes of its own output.
const maxRedactRounds = 4

// Redact replaces every match of kinds in s with "[REDACTED:<kind>]" and
// reports whether anything changed. Kinds may include the groups "pii" and
// "secrets"; unknown names are ignored. Overlaps are resolved as in Find
// (longest, then earliest, wins), so replacements never nest. The output is
// re-scanned so that it holds no further match of the kinds (a removal can
// expose a new candidate, e.g. a number whose neighbour was a match).
func Redact(s string, kinds []string) (string, bool) {
	ms := Find(s, kinds)
	if len(ms) == 0 {
		return s, false
	}
	out := apply(s, ms)
	for round := 1; round < maxRedactRounds; round++ {
		ms = Find(out, kinds)
		if len(ms) == 0 {
			break
		}
		out = apply(out, ms)
	}
	return out, out != s
}

// apply replaces the sorted, non-overlapping matches ms in s.
func apply(s string, ms []Match) string {
	var b strings.Builder
	n := len(s)
	for _, m := range ms {
		n += len(RedactedPrefix) + len(m.Kind) + 1 - (m.End - m.Start)
	}
	if n > 0 {
		b.Grow(n)
	}
	last := 0
	for _, m := range ms {
		if m.Start < last || m.End > len(s) || m.Start >= m.End {
			continue // defensive: never produced by Find
		}
		b.WriteString(s[last:m.Start])
		b.WriteString(RedactedPrefix)
		b.WriteString(m.Kind)
		b.WriteByte(']')
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}
