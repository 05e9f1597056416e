package conf

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Error is a problem located in a file: the config, a policy file.
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

// ErrorList collects every problem found in a file instead of stopping at
// the first.
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

// Add appends a located error.
func (l *ErrorList) Add(file string, line, col int, format string, args ...any) {
	*l = append(*l, Error{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// YAMLErrors turns a yaml.v3 error ("yaml: line 3: did not find expected
// key") into located Errors.
func YAMLErrors(file string, err error) ErrorList {
	var out ErrorList
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

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces each ${VAR} in s with the variable's value; a
// variable that is not set is an error (a secret left out of the
// environment must not become an empty credential).
func ExpandEnv(s string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// Bytes is a size in bytes, written as a whole number optionally followed
// by KiB, MiB or GiB (or KB, MB, GB: powers of 1000).
type Bytes int64

// ParseBytes reads a size: a whole number of bytes, optionally followed by
// KiB, MiB or GiB (or KB, MB, GB: powers of 1000).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}

// CheckURL accepts an http(s) URL with a host.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("expected an http(s) URL, got %q", s)
	}
	return nil
}
