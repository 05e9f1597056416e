package detect

import (
	"slices"
	"strings"
)

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

// resolve picks non-overlapping matches: longest first, then earliest, then
// by kind priority; the result is sorted by Start.
func resolve(c []Match) []Match {
	if len(c) < 2 {
		return c
	}
	slices.SortStableFunc(c, func(a, b Match) int {
		if la, lb := a.End-a.Start, b.End-b.Start; la != lb {
			return lb - la
		}
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return int(kindMask(a.Kind)) - int(kindMask(b.Kind))
	})
	out := make([]Match, 0, len(c))
	for _, m := range c {
		// out is kept sorted by Start; find the insertion point.
		i, _ := slices.BinarySearchFunc(out, m.Start, func(x Match, t int) int { return x.Start - t })
		if i > 0 && out[i-1].End > m.Start {
			continue
		}
		if i < len(out) && out[i].Start < m.End {
			continue
		}
		out = slices.Insert(out, i, m)
	}
	return out
}
