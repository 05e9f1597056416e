package policy

import (
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/wardenhq/warden"
)

// recordMap is a CEL map over a few fixed string fields of an event (agent,
// user, session, message, tool). It costs one small allocation to build —
// no Go map, no boxed values — and the interpreter reads fields through
// FindStringKey, its fast path for string-keyed maps. Not safe for
// concurrent use (it caches field values), like the Activation that owns it.
type recordMap struct {
	keys []string // static, one of the *Keys below
	strs [5]string
	args map[string]any // tool.args; the "args" key of toolKeys
	// labels are session.labels; the "labels" key of sessionKeys.
	labels []string
	// vals caches the CEL value of each field, boxed on first read: one
	// Activation evaluates many expressions reading the same fields.
	vals [5]ref.Val
}

var (
	agentKeys   = []string{"id", "name", "version", "provider", "model"}
	userKeys    = []string{"id", "email", "name", "organization"}
	sessionKeys = []string{"id", "labels"}
	messageKeys = []string{"role", "text"}
	toolKeys    = []string{"name", "id", "server", "args"}
)

var (
	_ traits.Mapper = (*recordMap)(nil)
	_ ref.Val       = (*recordMap)(nil)
)

// FindStringKey is the interpreter's fast path for field selection. It
// returns the field's CEL value, which the interpreter takes as is.
func (m *recordMap) FindStringKey(key string) (any, bool) {
	if v, ok := m.field(key); ok {
		return v, true
	}
	return nil, false
}

// Find implements traits.Mapper.
func (m *recordMap) Find(key ref.Val) (ref.Val, bool) {
	s, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return m.field(string(s))
}

// field returns the CEL value of the field key, boxing it once.
func (m *recordMap) field(key string) (ref.Val, bool) {
	for i, k := range m.keys {
		if k == key {
			if v := m.vals[i]; v != nil {
				return v, true
			}
			var v ref.Val
			switch k {
			case "args":
				v = types.NewStringInterfaceMap(types.DefaultTypeAdapter, m.args)
			case "labels":
				v = labelList(m.labels)
			default:
				v = types.String(m.strs[i])
			}
			m.vals[i] = v
			return v, true
		}
	}
	return nil, false
}

// Get implements traits.Indexer.
func (m *recordMap) Get(key ref.Val) ref.Val {
	if v, ok := m.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

// Contains implements traits.Container.
func (m *recordMap) Contains(key ref.Val) ref.Val {
	_, ok := m.Find(key)
	return types.Bool(ok)
}

// Size implements traits.Sizer.
func (m *recordMap) Size() ref.Val { return types.Int(len(m.keys)) }

// Iterator implements traits.Iterable.
func (m *recordMap) Iterator() traits.Iterator { return m.toMap().Iterator() }

// Type implements ref.Val: a map.
func (m *recordMap) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (m *recordMap) Value() any { return m.native() }

// Equal implements ref.Val.
func (m *recordMap) Equal(other ref.Val) ref.Val { return m.toMap().Equal(other) }

// ConvertToNative implements ref.Val.
func (m *recordMap) ConvertToNative(t reflect.Type) (any, error) {
	return m.toMap().ConvertToNative(t)
}

// ConvertToType implements ref.Val.
func (m *recordMap) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return m
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t)
}

func (m *recordMap) native() map[string]any {
	n := make(map[string]any, len(m.keys))
	for i, k := range m.keys {
		switch k {
		case "args":
			n[k] = m.args
		case "labels":
			n[k] = nonNil(m.labels)
		default:
			n[k] = m.strs[i]
		}
	}
	return n
}

func (m *recordMap) toMap() traits.Mapper {
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, m.native()).(traits.Mapper)
}

// emptyStrings is the value of an empty string list.
var emptyStrings = []string{}

func nonNil(ss []string) []string {
	if ss == nil {
		return emptyStrings
	}
	return ss
}

// noLabels is the value of an empty label list, shared: CEL lists are
// immutable.
var noLabels = types.NewStringList(types.DefaultTypeAdapter, emptyStrings)

// labelList is ss as a CEL list of strings (never null).
func labelList(ss []string) ref.Val {
	if len(ss) == 0 {
		return noLabels
	}
	return types.NewStringList(types.DefaultTypeAdapter, ss)
}

// provenanceList is the provenance variable: one map per Provenance, every
// field present (source_id "" and derived_from [] when absent).
func provenanceList(ps []warden.Provenance) ref.Val {
	items := make([]any, len(ps))
	for i, p := range ps {
		df := make([]any, len(p.DerivedFrom))
		for j, d := range p.DerivedFrom {
			df[j] = d
		}
		items[i] = map[string]any{"field": p.Field, "provenance_id": p.ID, "origin": p.Origin,
			"source_id": p.SourceID, "derived_from": df}
	}
	return types.NewDynamicList(types.DefaultTypeAdapter, items)
}
