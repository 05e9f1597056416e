package catalog

import "strconv"

// The field checks of the payload shapes (payload.go). They build the
// field path only when they fail, so a valid payload costs no allocation
// here.

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unknown value"
}

func path(parent, key string) string { return parent + "." + key }

func index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

func wrongType(field, want string, got any) *ShapeError {
	return &ShapeError{field, "expected " + want + ", got " + jsonType(got)}
}

func missing(parent, key string) *ShapeError {
	return &ShapeError{parent, "missing " + key}
}

// wantObject checks that m[key] is an object (or absent, unless required).
func wantObject(m map[string]any, parent, key string, required bool) (map[string]any, *ShapeError) {
	v, ok := m[key]
	if !ok {
		if required {
			return nil, missing(parent, key)
		}
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(path(parent, key), "an object", v)
	}
	return o, nil
}

// wantArray checks that m[key] is an array (or absent, unless required).
func wantArray(m map[string]any, parent, key string, required bool) ([]any, *ShapeError) {
	v, ok := m[key]
	if !ok {
		if required {
			return nil, missing(parent, key)
		}
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, wrongType(path(parent, key), "an array", v)
	}
	return a, nil
}

// wantString checks that m[key] is a string (or absent, unless required).
func wantString(m map[string]any, parent, key string, required bool) *ShapeError {
	v, ok := m[key]
	if !ok {
		if required {
			return missing(parent, key)
		}
		return nil
	}
	if _, ok := v.(string); !ok {
		return wrongType(path(parent, key), "a string", v)
	}
	return nil
}

// wantStrings checks the optional string members keys of m.
func wantStrings(m map[string]any, parent string, keys ...string) *ShapeError {
	for _, k := range keys {
		if err := wantString(m, parent, k, false); err != nil {
			return err
		}
	}
	return nil
}

// eachObject checks that every element of a is an object and runs f on it.
func eachObject(a []any, field string, f func(o map[string]any, field string) *ShapeError) *ShapeError {
	for i, v := range a {
		o, ok := v.(map[string]any)
		if !ok {
			return wrongType(index(field, i), "an object", v)
		}
		if f != nil {
			if err := f(o, ""); err != nil {
				if err.Field == "" {
					err.Field = index(field, i)
				} else if err.Field[0] == '.' {
					err.Field = index(field, i) + err.Field
				}
				return err
			}
		}
	}
	return nil
}

// under makes a field error found with the relative parent "" absolute.
func under(err *ShapeError, parent string) *ShapeError {
	if err != nil {
		if err.Field == "" {
			err.Field = parent
		} else if err.Field[0] == '.' || err.Field[0] == '[' {
			err.Field = parent + err.Field
		}
	}
	return err
}

// checkAgent validates an Agent object (lenient: nothing is required).
// Paths are built only on failure: field is joined by under.
func checkAgent(a map[string]any, field string) *ShapeError {
	return under(checkAgentRel(a), field)
}

func checkAgentRel(a map[string]any) *ShapeError {
	if err := wantStrings(a, "", "id", "name", "version", "description", "instructions", "url"); err != nil {
		return err
	}
	prov, err := wantObject(a, "", "provider", false)
	if err != nil {
		return err
	}
	if err := wantStrings(prov, ".provider", "name", "url"); err != nil {
		return err
	}
	model, err := wantObject(a, "", "model", false)
	if err != nil {
		return err
	}
	if err := wantStrings(model, ".model", "id", "name"); err != nil {
		return err
	}
	tools, err := wantArray(a, "", "tools", false)
	if err != nil {
		return err
	}
	return eachObject(tools, ".tools", func(t map[string]any, _ string) *ShapeError {
		return wantStrings(t, "", "id", "name")
	})
}

// checkContext validates a StepContext. The spec requires agent, session,
// turnId, stepId and timestamp; warden reads them when present and does not
// reject a step for lacking them (hand-written agents often omit some).
func checkContext(ctx map[string]any, field string) *ShapeError {
	return under(checkContextRel(ctx), field)
}

func checkContextRel(ctx map[string]any) *ShapeError {
	agent, err := wantObject(ctx, "", "agent", false)
	if err != nil {
		return err
	}
	if err := under(checkAgentRel(agent), ".agent"); err != nil {
		return err
	}
	sess, err := wantObject(ctx, "", "session", false)
	if err != nil {
		return err
	}
	if err := wantStrings(sess, ".session", "id"); err != nil {
		return err
	}
	if err := wantStrings(ctx, "", "turnId", "stepId", "timestamp"); err != nil {
		return err
	}
	user, err := wantObject(ctx, "", "user", false)
	if err != nil {
		return err
	}
	if err := wantStrings(user, ".user", "id", "email", "name"); err != nil {
		return err
	}
	org, err := wantObject(user, ".user", "organization", false)
	if err != nil {
		return err
	}
	return wantStrings(org, ".user.organization", "id", "name")
}

// checkParts validates an array of Part objects (text, file or data).
func checkParts(parts []any, field string) *ShapeError {
	return eachObject(parts, field, func(p map[string]any, _ string) *ShapeError {
		return wantStrings(p, "", "kind", "text")
	})
}
