package policy

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/wardenhq/warden"
)

// Policy is one compiled policy document.
type Policy struct {
	ID          string
	Version     string
	Description string
	// Events are the event names or globs ('*', '?') the policy applies to.
	Events []string
	// When is the CEL condition's source ("" is always true).
	When string
	// Decision is Allow, Deny, Modify, Ask or Defer; Abstain for a policy
	// that only labels the session (label: without decision:).
	Decision warden.Verdict
	// Labels are the session labels the policy sets when it matches
	// (label:), sorted; they are kept only when the step is taken.
	Labels     []string
	Reason     string // static reason, or "" with ReasonExpr
	ReasonExpr string // CEL string expression, or ""
	Mode       warden.Mode
	// Priority orders evaluation and reporting: lower first, ties keep file order.
	Priority int
	// File and Line locate the document.
	File string
	Line int

	rank       int    // position in the Set, by (Priority, load order)
	pack       bool   // from the built-in pack
	canon      string // canonical source (JSON of the document), for Revision
	when       *program
	reasonExpr *program
	ops        []op
	labels     bool // an expression may read session.labels (readsLabels)
}

// readsLabels reports whether one of p's expressions may read
// session.labels.
func (p *Policy) readsLabels() bool {
	if (p.when != nil && p.when.labels) || (p.reasonExpr != nil && p.reasonExpr.labels) {
		return true
	}
	for _, o := range p.ops {
		if o.prg != nil && o.prg.labels {
			return true
		}
	}
	return false
}

// UsesSessionLabels reports whether deciding an event named name with the
// set may read the session's labels: whether a candidate policy's
// expression may.
func (s *Set) UsesSessionLabels(name string) bool {
	for _, p := range s.Candidates(name) {
		if p.labels {
			return true
		}
	}
	return false
}

// Set is an immutable, compiled set of policies, indexed by event name. It is
// safe for concurrent use.
type Set struct {
	policies []*Policy
	sources  []string
	spec     Spec   // what the set was built from; Engine.Reload rebuilds it
	revision string // hex sha256 of the canonical sources, see Revision
	byID     map[string]*Policy
	exact    map[string][]*Policy
	globs    []*Policy

	mu    sync.Mutex
	cache atomic.Pointer[map[string][]*Policy] // event name -> candidates, copy on write
}

// maxCachedNames bounds the glob match cache (event names are a catalog, but
// hook events may be arbitrary strings).
const maxCachedNames = 4096

// newSet orders ps by (Priority, load order) and builds the event index.
func newSet(ps []*Policy, sources []string) *Set {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Priority < ps[j].Priority })
	s := &Set{policies: ps, sources: sources, byID: make(map[string]*Policy, len(ps)),
		exact: map[string][]*Policy{}}
	for i, p := range ps {
		p.rank = i
		p.labels = p.readsLabels()
		s.byID[p.ID] = p
		glob := false
		seen := map[string]bool{}
		for _, e := range p.Events {
			if isGlob(e) {
				glob = true
			} else if !seen[e] {
				seen[e] = true
				s.exact[e] = append(s.exact[e], p)
			}
		}
		if glob {
			s.globs = append(s.globs, p)
		}
	}
	s.revision = revision(ps)
	return s
}

// Policies returns the policies in evaluation order (priority, then file order).
// The slice must not be modified.
func (s *Set) Policies() []*Policy { return s.policies }

// Len returns the number of policies.
func (s *Set) Len() int { return len(s.policies) }

// Sources returns the files the set was loaded from, in load order.
func (s *Set) Sources() []string { return s.sources }

// Get returns the policy with the given id, or nil.
func (s *Set) Get(id string) *Policy { return s.byID[id] }

// Candidates returns the policies whose events match name, in evaluation
// order. Glob patterns are matched once per distinct name and cached, so the
// cost does not grow with the number of policies for other events.
func (s *Set) Candidates(name string) []*Policy {
	if len(s.globs) == 0 {
		return s.exact[name]
	}
	if m := s.cache.Load(); m != nil {
		if c, ok := (*m)[name]; ok {
			return c
		}
	}
	c := s.match(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cache.Load()
	if old != nil && len(*old) >= maxCachedNames {
		return c
	}
	n := make(map[string][]*Policy, 1+lenMap(old))
	if old != nil {
		for k, v := range *old {
			n[k] = v
		}
	}
	n[name] = c
	s.cache.Store(&n)
	return c
}

func lenMap(m *map[string][]*Policy) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// match merges the exact and glob candidates of name by rank.
func (s *Set) match(name string) []*Policy {
	exact := s.exact[name]
	var out []*Policy
	i := 0
	for _, g := range s.globs {
		if !g.matchesGlob(name) {
			continue
		}
		for i < len(exact) && exact[i].rank < g.rank {
			out = append(out, exact[i])
			i++
		}
		if i < len(exact) && exact[i] == g {
			i++ // listed by name and by pattern
		}
		out = append(out, g)
	}
	return append(out, exact[i:]...)
}

func (p *Policy) matchesGlob(name string) bool {
	for _, e := range p.Events {
		if isGlob(e) && Glob(e, name) {
			return true
		}
	}
	return false
}
