package hooks

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// Refusal reasons recorded on a hook's result when its patch is not applied.
const (
	RefusedField      = "patch_field_rejected"
	RefusedEscalation = "escalation_refused"
)

// guard is the hook chains' warden.Guard: a change to a hook event's payload
// may only touch the fields of the event's patch type, and may never
// escalate (AGH's rules): turn a denied/blocked/rejected permission decision
// into anything else, widen permissions, raise a TTL, a child count or depth,
// or drop required capabilities. AOS and ACS events are not restricted
// here: their modifies come from policies and remote Guardians, and what
// the agent gets back is a Guardian's answer (a modifiedRequest, ACS
// modifications), not a hook patch.
func guard(ev *warden.Event, next map[string]any) error {
	e, ok := catalog.Lookup(ev.Name)
	if !ok || e.Source == catalog.Source("aos") || e.Source == catalog.SourceACS {
		return nil
	}
	before := ev.Payload
	for k, v := range next {
		if old, had := before[k]; had && reflect.DeepEqual(old, v) {
			continue
		}
		if !slices.Contains(e.PatchFields, k) {
			return fmt.Errorf("%s: %s is not a field of %s", RefusedField, k, orDefault(e.Patch, "this event's patch"))
		}
	}
	for k := range before {
		if _, kept := next[k]; !kept && !slices.Contains(e.PatchFields, k) {
			return fmt.Errorf("%s: %s may not be removed", RefusedField, k)
		}
	}
	return escalation(before, next)
}

// Guard is the warden.Guard of every hook chain (see guard), for chains
// composed outside this package that must refuse the same changes: `warden
// replay` composes recorded hook results with a policy step run again.
func Guard(ev *warden.Event, next map[string]any) error { return guard(ev, next) }

var _ warden.Guard = Guard

var denied = []string{"deny", "denied", "block", "blocked", "reject", "rejected"}

func escalation(before, next map[string]any) error {
	if d, _ := before["decision"].(string); slices.Contains(denied, strings.ToLower(d)) {
		if n, _ := next["decision"].(string); !slices.Contains(denied, strings.ToLower(n)) {
			return fmt.Errorf("%s: a %s permission decision may not become %q", RefusedEscalation, d, n)
		}
	}
	for k, old := range before {
		nv, ok := next[k]
		if !ok {
			continue
		}
		lk := strings.ToLower(k)
		switch {
		case strings.Contains(lk, "ttl") || strings.HasPrefix(lk, "max_") || strings.Contains(lk, "child_count") || strings.Contains(lk, "depth"):
			if o, n, ok := numbers(old, nv); ok && n > o {
				return fmt.Errorf("%s: %s may not be raised (%v → %v)", RefusedEscalation, k, old, nv)
			}
		case strings.Contains(lk, "permission"):
			if added := grown(old, nv); added != "" {
				return fmt.Errorf("%s: %s may not be widened (adds %s)", RefusedEscalation, k, added)
			}
		case strings.HasPrefix(lk, "required"):
			if removed := grown(nv, old); removed != "" {
				return fmt.Errorf("%s: %s may not lose %s", RefusedEscalation, k, removed)
			}
		}
	}
	return nil
}

func numbers(a, b any) (float64, float64, bool) {
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	return x, y, ok1 && ok2
}

// grown returns an element of next that old lacks (lists compared as sets
// of their JSON values; maps by their keys), or "".
func grown(old, next any) string {
	set := func(v any) map[string]bool {
		m := map[string]bool{}
		switch t := v.(type) {
		case []any:
			for _, x := range t {
				m[fmt.Sprint(x)] = true
			}
		case map[string]any:
			for k, x := range t {
				m[k+"="+fmt.Sprint(x)] = true
			}
		case string:
			m[t] = true
		}
		return m
	}
	o, n := set(old), set(next)
	for k := range n {
		if !o[k] {
			return k
		}
	}
	return ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
