package policy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/detect"
)

type opKind uint8

const (
	opRedact opKind = iota
	opSet
	opPatch
)

// op is one compiled modify step.
type op struct {
	kind  opKind
	kinds []string   // redact: expanded detector kinds
	paths [][]string // redact: nil = whole payload but "context"
	path  []string   // set
	prg   *program   // set value, or patch
}

// parseOps compiles a `modify:` list, reporting every problem at its line.
func parseOps(file string, n *yaml.Node, errs *ErrorList) []op {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		errs.Add(file, n.Line, n.Column, "modify must be a non-empty list of operations")
		return nil
	}
	var ops []op
	for i, item := range n.Content {
		where := fmt.Sprintf("modify[%d]", i)
		if item.Kind != yaml.MappingNode {
			errs.Add(file, item.Line, item.Column, "%s: an operation is a mapping with one of redact, set, patch", where)
			continue
		}
		fields := map[string]*yaml.Node{}
		keyLine := map[string]int{}
		ok := true
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			switch k.Value {
			case "redact", "set", "patch", "paths":
			default:
				errs.Add(file, k.Line, k.Column, "%s: unknown field %q (want redact, set or patch)", where, k.Value)
				ok = false
				continue
			}
			if _, dup := fields[k.Value]; dup {
				errs.Add(file, k.Line, k.Column, "%s: duplicate field %q", where, k.Value)
				ok = false
			}
			fields[k.Value], keyLine[k.Value] = v, k.Line
		}
		if !ok {
			continue
		}
		kinds := 0
		for _, k := range []string{"redact", "set", "patch"} {
			if fields[k] != nil {
				kinds++
			}
		}
		if kinds != 1 {
			errs.Add(file, item.Line, item.Column, "%s: an operation needs exactly one of redact, set, patch", where)
			continue
		}
		if fields["paths"] != nil && fields["redact"] == nil {
			errs.Add(file, keyLine["paths"], 0, "%s: paths is only valid with redact", where)
			continue
		}
		var o op
		switch {
		case fields["redact"] != nil:
			o, ok = parseRedact(file, where, fields["redact"], fields["paths"], errs)
		case fields["set"] != nil:
			o, ok = parseSet(file, where, fields["set"], errs)
		default:
			v := fields["patch"]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				errs.Add(file, v.Line, v.Column, "%s: patch must be a CEL expression (string)", where)
				continue
			}
			p, msgs := compileTracked(v.Value, nil)
			for _, m := range msgs {
				errs.Add(file, v.Line, v.Column, "%s.patch: %s", where, m)
			}
			o, ok = op{kind: opPatch, prg: p}, msgs == nil
		}
		if ok {
			ops = append(ops, o)
		}
	}
	return ops
}

func parseRedact(file, where string, kn, pn *yaml.Node, errs *ErrorList) (op, bool) {
	names, ok := stringList(kn)
	if !ok || len(names) == 0 {
		errs.Add(file, kn.Line, kn.Column, "%s: redact must be a non-empty list of detector kinds", where)
		return op{}, false
	}
	kinds, err := detect.ExpandKinds(names)
	if err != nil {
		errs.Add(file, kn.Line, kn.Column, "%s.redact: %v", where, err)
		return op{}, false
	}
	o := op{kind: opRedact, kinds: kinds}
	if pn != nil {
		ps, ok := stringList(pn)
		if !ok || len(ps) == 0 {
			errs.Add(file, pn.Line, pn.Column, "%s: paths must be a non-empty list of JSON pointers", where)
			return op{}, false
		}
		o.paths = [][]string{}
		for _, p := range ps {
			toks, err := parsePointer(p)
			if err != nil {
				errs.Add(file, pn.Line, pn.Column, "%s.paths: %v", where, err)
				return op{}, false
			}
			o.paths = append(o.paths, toks)
		}
	}
	return o, true
}

func parseSet(file, where string, n *yaml.Node, errs *ErrorList) (op, bool) {
	if n.Kind != yaml.MappingNode {
		errs.Add(file, n.Line, n.Column, "%s: set must be a mapping {path: <JSON pointer>, value: <CEL>}", where)
		return op{}, false
	}
	var path, value *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "path":
			path = v
		case "value":
			value = v
		default:
			errs.Add(file, k.Line, k.Column, "%s.set: unknown field %q (want path, value)", where, k.Value)
			return op{}, false
		}
	}
	if path == nil || value == nil || path.Kind != yaml.ScalarNode || value.Kind != yaml.ScalarNode {
		errs.Add(file, n.Line, n.Column, "%s: set needs path (JSON pointer) and value (CEL)", where)
		return op{}, false
	}
	toks, err := parsePointer(path.Value)
	if err != nil {
		errs.Add(file, path.Line, path.Column, "%s.set.path: %v", where, err)
		return op{}, false
	}
	p, msgs := compileTracked(value.Value, nil)
	for _, m := range msgs {
		errs.Add(file, value.Line, value.Column, "%s.set.value: %s", where, m)
	}
	return op{kind: opSet, path: toks, prg: p}, msgs == nil
}

// apply runs o on doc (owned by the caller) with act for CEL values, and
// returns the new document and whether it changed.
func (o *op) apply(doc map[string]any, act *Activation) (map[string]any, bool, error) {
	switch o.kind {
	case opRedact:
		return doc, redactDoc(doc, o.kinds, o.paths), nil
	case opSet:
		act.setPayload(doc)
		v, err := o.prg.eval(act)
		if err != nil {
			return doc, false, err
		}
		j, err := celToJSON(v)
		if err != nil {
			return doc, false, fmt.Errorf("set %s: %v", pointerString(o.path), err)
		}
		return setPointer(doc, o.path, j)
	default:
		act.setPayload(doc)
		v, err := o.prg.eval(act)
		if err != nil {
			return doc, false, err
		}
		var patch []byte
		if s, ok := v.(types.String); ok {
			patch = []byte(s)
		} else {
			j, err := celToJSON(v)
			if err != nil {
				return doc, false, fmt.Errorf("patch: %v", err)
			}
			if m, ok := j.(map[string]any); ok {
				j = []any{m} // a single operation
			}
			if patch, err = json.Marshal(j); err != nil {
				return doc, false, fmt.Errorf("patch: %v", err)
			}
		}
		return applyPatch(doc, patch)
	}
}

// celToJSON converts a CEL value into plain JSON values (string, float64,
// bool, nil, []any, map[string]any), always building new containers.
func celToJSON(v ref.Val) (any, error) {
	switch t := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(t), nil
	case types.Int:
		return float64(t), nil
	case types.Uint:
		return float64(t), nil
	case types.Double:
		f := float64(t)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", f)
		}
		return f, nil
	case types.String:
		return string(t), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(t), nil
	case *types.Optional:
		if !t.HasValue() {
			return nil, nil
		}
		return celToJSON(t.GetValue())
	case traits.Mapper:
		m := map[string]any{}
		for it := t.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			x, err := celToJSON(t.Get(k))
			if err != nil {
				return nil, err
			}
			m[string(ks)] = x
		}
		return m, nil
	case traits.Lister:
		n, _ := t.Size().(types.Int)
		a := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			x, err := celToJSON(t.Get(i))
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		return a, nil
	case types.Timestamp, types.Duration:
		return string(t.ConvertToType(types.StringType).(types.String)), nil
	}
	if types.IsError(v) {
		return nil, fmt.Errorf("%v", v)
	}
	return nil, fmt.Errorf("a %s value has no JSON form", v.Type().TypeName())
}

func stringList(n *yaml.Node) ([]string, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" || n.Value == "" {
			return nil, false
		}
		return []string{n.Value}, true
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" || c.Value == "" {
				return nil, false
			}
			out = append(out, c.Value)
		}
		return out, true
	}
	return nil, false
}
