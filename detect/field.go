package detect

import "strings"

// Fields: a secret is often not written as an assignment in a text but
// stored under a key of a structured value — {"api_key": "…"} in JSON, an
// AOS tool input {"name": "password", "value": "…"}, a header list
// [{"name": "Authorization", "value": "Bearer …"}]. The text of such a
// value (its strings, joined) no longer shows the key, so Find does not
// see an assignment there. Field judges the value with its key, by the
// same rule as the assignment key: value in a text.

// FieldKind is the kind of a secret found by its key: api_key, the kind of
// the generic assignments.
const FieldKind = "api_key"

// Field reports whether value, stored under key, is a secret because of
// its key, and which part of value is the secret: it is exactly what Find
// matches as an api_key in the text `key: value` — a key that ends in a
// secret's name (api_key, apikey, secret, secret_key, access_key, token,
// authorization, password, passwd, passphrase, private_key; any case, '-'
// and '_' alike; not a pagination cursor such as page_token), and a value
// that starts (after an optional quote and Bearer/Token/Basic scheme) with
// 16 or more characters of high entropy mixing letters and digits.
func Field(key, value string) (m Match, ok bool) {
	if len(value) < 16 || !secretKey(key) {
		return Match{}, false
	}
	start, end, ok := secretValue(value, 0)
	if !ok {
		return Match{}, false
	}
	// A secret of a known format there is that detector's (as in a text,
	// where the more specific kind wins): the field adds nothing.
	for _, m := range Find(value, secretGroup) {
		if m.Start < end && start < m.End {
			return Match{}, false
		}
	}
	return Match{Kind: FieldKind, Start: start, End: end}, true
}

var secretGroup = []string{"secrets"}

// PairKey returns the key under which an object's "value" member is
// stored when the object is a name/value pair: its "name" member, or else
// its "key" member, when that is a string (an AOS tool input, an HTTP
// header or environment variable list, a tag list).
func PairKey(obj map[string]any) (string, bool) {
	for _, k := range [...]string{"name", "key"} {
		if s, ok := obj[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// maxFieldDepth bounds how deep HasSecretField looks into a value.
const maxFieldDepth = 64

// HasSecretField reports whether the decoded JSON value v (maps, slices,
// strings as encoding/json decodes them) holds a string that Field finds
// a secret under its key: an object member, or the "value" of a
// name/value pair (PairKey).
func HasSecretField(v any) bool { return hasSecretField(v, 0) }

func hasSecretField(v any, depth int) bool {
	if depth > maxFieldDepth {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok {
				if _, ok := Field(k, s); ok {
					return true
				}
			} else if hasSecretField(x, depth+1) {
				return true
			}
		}
		if s, ok := t["value"].(string); ok {
			if name, ok := PairKey(t); ok {
				if _, ok := Field(name, s); ok {
					return true
				}
			}
		}
	case []any:
		for _, x := range t {
			if hasSecretField(x, depth+1) {
				return true
			}
		}
	}
	return false
}

// RedactField returns value with the secret Field finds under key replaced
// by "[REDACTED:api_key]", when kinds ask for api_key (or "secrets"), and
// whether it changed.
func RedactField(key, value string, kinds []string) (string, bool) {
	var mask uint32
	for _, name := range kinds {
		mask |= kindMask(name)
	}
	if mask&(1<<kAPIKey) == 0 {
		return value, false
	}
	m, ok := Field(key, value)
	if !ok {
		return value, false
	}
	var b strings.Builder
	b.Grow(len(value))
	b.WriteString(value[:m.Start])
	b.WriteString(RedactedPrefix)
	b.WriteString(FieldKind)
	b.WriteByte(']')
	b.WriteString(value[m.End:])
	return b.String(), true
}
