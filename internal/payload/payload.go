// Package payload holds what every surface does to a decoded JSON
// payload.
package payload

// Clone deep-copies a decoded JSON payload so a handler can change the
// copy without touching the event (handlers never mutate an Event); nil
// becomes an empty object. Scalars are shared: they are immutable.
func Clone(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	return cloneJSON(p).(map[string]any)
}

func cloneJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = cloneJSON(x)
		}
		return a
	}
	return v
}
