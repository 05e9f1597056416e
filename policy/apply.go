package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/wardenhq/warden/detect"
	"github.com/wardenhq/warden/internal/jsonpointer"
)

// This file holds the payload appliers behind the modify ops. They work on a
// JSON document decoded into map[string]any / []any / string / float64 / bool /
// nil, which the caller owns (a deep copy of the event's payload).

// contextKey is the top-level payload member holding step metadata; redact
// leaves it alone by default, as Event.Text does.
const contextKey = "context"

// parsePointer parses an RFC 6901 JSON Pointer into its reference tokens.
func parsePointer(s string) ([]string, error) {
	if s == "" {
		return []string{}, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q must start with '/'", s)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("JSON pointer %q: '~' must be followed by 0 or 1", s)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// pointerString renders tokens back into a JSON Pointer, for messages.
func pointerString(toks []string) string { return jsonpointer.Format(toks) }

// arrayIndex parses an array index token: decimal, no leading zeros.
func arrayIndex(tok string, n int) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i >= n {
		return 0, fmt.Errorf("array index %s out of range (length %d)", tok, n)
	}
	return i, nil
}

// slot is a place in the document: its current value and how to replace it.
type slot struct {
	val any
	set func(any)
}

// resolve walks toks from root and returns the slot it names.
func resolve(root *any, toks []string) (slot, error) {
	cur := slot{val: *root, set: func(v any) { *root = v }}
	for i, tok := range toks {
		switch c := cur.val.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return slot{}, fmt.Errorf("path %s: no member %q", pointerString(toks[:i+1]), tok)
			}
			cur = slot{val: v, set: func(v any) { c[tok] = v }}
		case []any:
			j, err := arrayIndex(tok, len(c))
			if err != nil {
				return slot{}, fmt.Errorf("path %s: %v", pointerString(toks[:i+1]), err)
			}
			cur = slot{val: c[j], set: func(v any) { c[j] = v }}
		default:
			return slot{}, fmt.Errorf("path %s: parent is not an object or array", pointerString(toks[:i+1]))
		}
	}
	return cur, nil
}

// setPointer sets the member or element toks names to value: an object member
// is replaced or added, an array element must exist or be "-" (append). A
// missing parent is an error. It returns the (possibly new) root and whether
// anything changed.
func setPointer(doc map[string]any, toks []string, value any) (map[string]any, bool, error) {
	if len(toks) == 0 {
		m, ok := value.(map[string]any)
		if !ok {
			return doc, false, errors.New("path \"\": the payload must stay a JSON object")
		}
		return m, !reflect.DeepEqual(doc, m), nil
	}
	var root any = doc
	parent, err := resolve(&root, toks[:len(toks)-1])
	if err != nil {
		return doc, false, err
	}
	last := toks[len(toks)-1]
	switch c := parent.val.(type) {
	case map[string]any:
		old, ok := c[last]
		c[last] = value
		return doc, !ok || !reflect.DeepEqual(old, value), nil
	case []any:
		if last == "-" {
			parent.set(append(c, value))
			return doc, true, nil
		}
		j, err := arrayIndex(last, len(c))
		if err != nil {
			return doc, false, fmt.Errorf("path %s: %v", pointerString(toks), err)
		}
		old := c[j]
		c[j] = value
		return doc, !reflect.DeepEqual(old, value), nil
	}
	return doc, false, fmt.Errorf("path %s: parent is not an object or array", pointerString(toks))
}

// applyPatch applies an RFC 6902 patch (JSON) to doc and returns the result,
// which must still be an object, and whether it differs from doc.
func applyPatch(doc map[string]any, patch []byte) (out map[string]any, changed bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, changed, err = doc, false, fmt.Errorf("patch: %v", r)
		}
	}()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return doc, false, fmt.Errorf("patch: %v", err)
	}
	before, err := json.Marshal(doc)
	if err != nil {
		return doc, false, fmt.Errorf("patch: %v", err)
	}
	after, err := p.Apply(before)
	if err != nil {
		return doc, false, fmt.Errorf("patch: %v", err)
	}
	var res any
	if err := json.Unmarshal(after, &res); err != nil {
		return doc, false, fmt.Errorf("patch: result is not JSON: %v", err)
	}
	m, ok := res.(map[string]any)
	if !ok {
		return doc, false, errors.New("patch: the payload must stay a JSON object")
	}
	norm, err := json.Marshal(m)
	if err != nil {
		return doc, false, fmt.Errorf("patch: %v", err)
	}
	return m, !bytes.Equal(before, norm), nil
}

// redactDoc replaces detector matches of kinds in every string value (never
// keys) of doc in place: under each of paths, or, with no paths, everywhere
// but the top-level "context" member. Paths that do not exist are skipped.
func redactDoc(doc map[string]any, kinds []string, paths [][]string) bool {
	changed := false
	if paths == nil {
		for k, v := range doc {
			if k == contextKey {
				continue
			}
			if nv, ok := redactMember(k, v, kinds); ok {
				doc[k] = nv
				changed = true
			}
		}
		return changed
	}
	var root any = doc
	for _, toks := range paths {
		if len(toks) == 0 {
			for k, v := range doc {
				if nv, ok := redactMember(k, v, kinds); ok {
					doc[k] = nv
					changed = true
				}
			}
			continue
		}
		s, err := resolve(&root, toks)
		if err != nil {
			continue
		}
		if nv, ok := redactMember(toks[len(toks)-1], s.val, kinds); ok {
			s.set(nv)
			changed = true
		}
	}
	return changed
}

// redactMember is redactValue for the value x of member key: a string is
// also judged by its key (detect.RedactField: {"api_key": "…"}).
func redactMember(key string, x any, kinds []string) (any, bool) {
	nx, changed := redactValue(x, kinds)
	if s, ok := nx.(string); ok {
		if ns, ok := detect.RedactField(key, s, kinds); ok {
			return ns, true
		}
	}
	return nx, changed
}

// redactValue redacts v in place where it can (objects, arrays) and returns
// the replacement for strings.
func redactValue(v any, kinds []string) (any, bool) {
	switch t := v.(type) {
	case string:
		return detect.Redact(t, kinds)
	case map[string]any:
		changed := false
		for k, x := range t {
			if nx, ok := redactMember(k, x, kinds); ok {
				t[k] = nx
				changed = true
			}
		}
		// A name/value pair (an AOS input, a header list): the value is
		// judged by the name it is stored under.
		if s, ok := t["value"].(string); ok {
			if name, ok := detect.PairKey(t); ok {
				if ns, ok := detect.RedactField(name, s, kinds); ok {
					t["value"] = ns
					changed = true
				}
			}
		}
		return t, changed
	case []any:
		changed := false
		for i, x := range t {
			if nx, ok := redactValue(x, kinds); ok {
				t[i] = nx
				changed = true
			}
		}
		return t, changed
	}
	return v, false
}
