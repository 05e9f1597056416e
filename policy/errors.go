package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is one problem found while loading policies, located at the YAML line of
// the offending field.
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error formats e as "file:line: message".
func (e Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ErrorList collects every error found while loading a policy set; Load
// returns it (never empty) instead of stopping at the first problem.
type ErrorList []Error

// Error prints one "file:line: message" per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns l as an error, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l *ErrorList) add(file string, line, col int, format string, args ...any) {
	*l = append(*l, Error{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// YAMLErrors turns a yaml.v3 error ("yaml: line 3: did not find expected key")
// into located Errors; the config loader uses it too.
func YAMLErrors(file string, err error) []Error {
	var out []Error
	for _, msg := range strings.Split(err.Error(), "\n") {
		msg = strings.TrimSpace(msg)
		if msg == "" || msg == "yaml: unmarshal errors:" {
			continue
		}
		e := Error{File: file, Msg: "invalid YAML: " + msg}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			// yaml.v3 leaves the line out when its (zero-based) mark is on
			// the first line.
			e.Line = 1
			if m[1] != "" {
				e.Line, _ = strconv.Atoi(m[1])
			}
			e.Msg = "invalid YAML: " + m[2]
		} else if strings.HasPrefix(msg, "line ") {
			if i := strings.Index(msg, ":"); i > 0 {
				e.Line, _ = strconv.Atoi(msg[len("line "):i])
				e.Msg = "invalid YAML: " + strings.TrimSpace(msg[i+1:])
			}
		}
		out = append(out, e)
	}
	return out
}
