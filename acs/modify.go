package acs

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/internal/jsonpointer"
)

// change is one difference between the payload asked about and the one
// the policies made of it.
type change struct {
	path     []string // keys from the payload's root
	old, new any
	replace  bool // a string replaced by a string (a redaction can say it)
}

// Modifications expresses the change from old to new as ACS §6.3
// modifications: string values replaced become redactions (JSON pointers
// into the payload), a changed tool argument of steps/toolCallRequest
// becomes a parameter_overrides entry (the argument's new value), and
// anything else (a member added or removed, a type changed) makes it a
// wholesale modified_content (the new payload as JSON text), which is
// then the only member. Targets never overlap. nil when nothing changed.
func Modifications(event string, old, new map[string]any) map[string]any {
	var cs []change
	diff(old, new, nil, &cs)
	if len(cs) == 0 {
		return nil
	}
	overrides := map[string]any{}
	var redactions []any
	for _, c := range cs {
		arg, inArg := argumentOf(event, c.path)
		switch {
		case inArg && len(c.path) >= 3 && c.path[2] == "value":
			if !c.replace {
				overrides[arg] = nil // filled below: the argument's new value
			}
		case inArg, !c.replace:
			return wholesale(new) // an argument added or removed, its wrapper changed, a type changed
		}
	}
	for arg := range overrides {
		w, _ := new["arguments"].(map[string]any)[arg].(map[string]any)
		o, _ := old["arguments"].(map[string]any)[arg].(map[string]any)
		if w == nil || o == nil || !sameExcept(o, w, "value") {
			return wholesale(new)
		}
		overrides[arg] = w["value"]
	}
	for _, c := range cs {
		if arg, ok := argumentOf(event, c.path); ok {
			if _, over := overrides[arg]; over {
				continue
			}
		}
		redactions = append(redactions, map[string]any{"path": jsonpointer.Format(c.path), "replacement": c.new})
	}
	out := map[string]any{}
	if len(redactions) > 0 {
		out["redactions"] = redactions
	}
	if len(overrides) > 0 {
		out["parameter_overrides"] = overrides
	}
	return out
}

// argumentOf names the tool argument a path of a steps/toolCallRequest
// payload is in (arguments/<name>/…).
func argumentOf(event string, path []string) (string, bool) {
	if event != catalog.MethodToolCallRequest || len(path) < 2 || path[0] != "arguments" {
		return "", false
	}
	return path[1], true
}

func sameExcept(a, b map[string]any, skip string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if k == skip {
			continue
		}
		if w, ok := b[k]; !ok || !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

// wholesale is a modified_content modification: the new payload, as JSON.
func wholesale(new map[string]any) map[string]any {
	b, err := json.Marshal(new)
	if err != nil {
		b = []byte("{}")
	}
	return map[string]any{"modified_content": string(b)}
}

// diff appends the differences of a and b (at path) to cs, in key order.
func diff(a, b any, path []string, cs *[]change) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*cs = append(*cs, change{path: clone(path), old: a, new: b})
			return
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, has := x[k]; !has {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, ina := x[k]
			bv, inb := y[k]
			p := append(clone(path), k)
			if !ina || !inb {
				*cs = append(*cs, change{path: p, old: av, new: bv})
				continue
			}
			diff(av, bv, p, cs)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*cs = append(*cs, change{path: clone(path), old: a, new: b})
			return
		}
		for i := range x {
			diff(x[i], y[i], append(clone(path), itoa(i)), cs)
		}
	case string:
		if y, ok := b.(string); ok {
			if x != y {
				*cs = append(*cs, change{path: clone(path), old: a, new: b, replace: true})
			}
			return
		}
		*cs = append(*cs, change{path: clone(path), old: a, new: b})
	default:
		if !reflect.DeepEqual(numberless(a), numberless(b)) {
			*cs = append(*cs, change{path: clone(path), old: a, new: b})
		}
	}
}

// numberless turns a json.Number into its float64, so a number the
// policies passed through unchanged (decoded differently) is no change.
func numberless(v any) any {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}

func clone(p []string) []string { return append([]string(nil), p...) }

func itoa(i int) string { return strconv.Itoa(i) }
