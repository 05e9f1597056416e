package hostadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/internal/payload"
)

// applyModifications applies ACS §6.3 modifications to a copy of the
// payload sent: modified_content (the whole new payload, as JSON text;
// then the only member), redactions (a JSON pointer and its replacement)
// and parameter_overrides (a tool argument's new value). A target that
// does not exist is an error: a modification the adapter cannot apply
// exactly is not applied in part.
func applyModifications(sent, mods map[string]any) (map[string]any, error) {
	if mc, ok := mods["modified_content"]; ok {
		if len(mods) != 1 {
			return nil, errors.New("modified_content comes with other modifications")
		}
		s, ok := mc.(string)
		if !ok {
			return nil, errors.New("modified_content is not a string")
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var p map[string]any
		if err := dec.Decode(&p); err != nil || p == nil {
			return nil, errors.New("modified_content is not a JSON object")
		}
		return p, nil
	}
	p := payload.Clone(sent)
	if rs, has := mods["redactions"]; has {
		list, ok := rs.([]any)
		if !ok {
			return nil, errors.New("redactions is not an array")
		}
		for i, r := range list {
			m, _ := r.(map[string]any)
			ptr, _ := m["path"].(string)
			if err := setPointer(p, ptr, m["replacement"]); err != nil {
				return nil, fmt.Errorf("redactions[%d]: %w", i, err)
			}
		}
	}
	if po, has := mods["parameter_overrides"]; has {
		over, ok := po.(map[string]any)
		if !ok {
			return nil, errors.New("parameter_overrides is not an object")
		}
		args, ok := p["arguments"].(map[string]any)
		if !ok {
			return nil, errors.New("parameter_overrides on a payload without arguments")
		}
		for k, v := range over {
			w, ok := args[k].(map[string]any)
			if !ok {
				w = map[string]any{}
				args[k] = w
			}
			w["value"] = v
		}
	}
	return p, nil
}

// setPointer sets the member an RFC 6901 pointer names, which must exist.
func setPointer(doc map[string]any, ptr string, v any) error {
	if !strings.HasPrefix(ptr, "/") {
		return fmt.Errorf("%q is not a JSON pointer", ptr)
	}
	toks := strings.Split(ptr[1:], "/")
	var cur any = doc
	for i, t := range toks {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			if _, ok := c[t]; !ok {
				return fmt.Errorf("%s: no such member", ptr)
			}
			if last {
				c[t] = v
				return nil
			}
			cur = c[t]
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(c) {
				return fmt.Errorf("%s: no such element", ptr)
			}
			if last {
				c[n] = v
				return nil
			}
			cur = c[n]
		default:
			return fmt.Errorf("%s: no such member", ptr)
		}
	}
	return fmt.Errorf("%s: empty pointer", ptr)
}
