// Package jsonpointer writes JSON Pointers (RFC 6901): the one escaping of
// a reference token ("~" as "~0", "/" as "~1") that every path warden
// reports (redactions, provenance facts, policy errors) is written with.
package jsonpointer

import "strings"

// Escape escapes one reference token.
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Format is the pointer of path, a token each ("" for the whole document).
func Format(path []string) string {
	var b strings.Builder
	for _, t := range path {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}
