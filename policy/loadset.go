package policy

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Spec says which policies make up a Set: the built-in pack (when Builtin)
// followed by the files and directories of Paths. It is what `--builtin` and
// `--policy` (and a config file's `policies:`) select, and what
// Engine.Reload rebuilds.
type Spec struct {
	// Builtin puts the built-in pack first (`--builtin`, default true).
	Builtin bool
	// Paths are policy files or directories added after the pack.
	Paths []string
	// Events, when not nil, are the known event names (the hook catalog's):
	// an `events` entry, name or glob, that matches none of them is a load
	// error with the nearest name suggested. Package policy does not import
	// the catalog itself, so the caller passes its names.
	Events []string
}

// String describes the spec for logs: "the built-in pack + a.yaml, dir".
func (s Spec) String() string {
	var parts []string
	if s.Builtin {
		parts = append(parts, "the built-in pack")
	}
	if len(s.Paths) > 0 {
		parts = append(parts, strings.Join(s.Paths, ", "))
	}
	if len(parts) == 0 {
		return "no policies"
	}
	return strings.Join(parts, " + ")
}

// LoadSet compiles the set spec selects: the built-in pack (when
// spec.Builtin) and then every file of spec.Paths, as Load reads them. A
// policy id defined both by the pack and by a file is an error naming both
// places; an empty or unparseable file is an error naming file:line, so a
// half-written file never yields a smaller set. Every problem is reported
// (an ErrorList).
func LoadSet(spec Spec) (*Set, error) {
	l := newLoader(osFS{})
	l.events = spec.Events
	if spec.Builtin {
		pack, err := Builtin()
		if err != nil {
			return nil, fmt.Errorf("the built-in pack: %w", err)
		}
		for _, p := range pack.policies {
			cp := *p // the pack's policies are shared by every set: copy, newSet sets rank
			l.ps = append(l.ps, &cp)
			l.ids[cp.ID] = &cp
		}
		l.sources = append(l.sources, pack.sources...)
	}
	for _, p := range spec.Paths {
		l.path(p, filepath.Join)
	}
	spec.Paths = append([]string(nil), spec.Paths...)
	return l.finish(spec)
}

// Spec returns what the set was built from (LoadSet's argument; for Load,
// its paths without the pack; for Builtin, the pack alone).
func (s *Set) Spec() Spec { return s.spec }

// CheckEvent returns nil when pattern, an event name or glob, matches at
// least one of names, else an error such as `"tool.precall" matches no
// event in the catalog (did you mean "tool.pre_call"?)` naming the nearest
// of names by edit distance.
func CheckEvent(pattern string, names []string) error {
	for _, n := range names {
		if Glob(pattern, n) {
			return nil
		}
	}
	msg := fmt.Sprintf("%q matches no event in the catalog", pattern)
	if best := nearest(pattern, names); best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Errorf("%s", msg)
}

// nearest returns the name closest to s by edit distance (the first in
// names on a tie), or "" when names is empty.
func nearest(s string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(s, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
