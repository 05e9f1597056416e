package policy

import (
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The flow functions classify what a step does with data, for the session
// flow rules (the built-in lethal-trifecta policies, docs/policies.md).
// Each takes a string, a list or a map (tool.args, payload) and looks only
// at strings at most maxFlowString bytes long, so its cost is one scan of
// its argument; the cost estimator charges it as one.
//
//   - private_path(x): x names a private path: a string holding one (a
//     path, or a shell command mentioning it), a list of such strings, or
//     a map whose path-like members (pathKeys) or command member do.
//   - private_marked(x): x (a map; a retrieval's payload) or one of its
//     results[] items is marked private: private: true, or visibility,
//     scope or classification one of private, confidential, secret,
//     personal.
//   - shell_fetch(x): x (a shell command, or a map with a command member)
//     runs curl or wget on an http(s) URL.
//   - shell_send(x): x sends data out: curl with -d/--data*/-F/--form/
//     -T/--upload-file or -X POST/PUT/PATCH, wget --post-data/--post-file,
//     sendmail, mail -s.
//   - external_url(x): x is an http(s) URL whose host is not localhost,
//     127.x or [::1].
var flowFunctions = []struct {
	name string
	fn   func(v any) bool
}{
	{"private_path", privatePath},
	{"private_marked", privateMarked},
	{"shell_fetch", func(v any) bool { return matchCommand(v, shellFetchRE) }},
	{"shell_send", func(v any) bool { return matchCommand(v, shellSendRE) }},
	{"external_url", externalURL},
}

// maxFlowString bounds the strings the flow functions read: a path, a URL
// or a command longer than this is not looked at.
const maxFlowString = 64 << 10

// pathKeys are the tool argument names that hold file paths or URIs.
var pathKeys = []string{"path", "paths", "file_path", "filePath", "absolute_path", "filename", "file", "target_file", "uri"}

var (
	// privatePathRE matches a private path inside a string: a credential
	// or personal directory under a home directory, a secrets file, a key
	// file, the system's password files, or a secrets/credentials/private
	// directory.
	privatePathRE = regexp.MustCompile(`(?:^|[/\s'"=:])(?:` +
		`(?:~|\$HOME|/home/[^/\s]+|/Users/[^/\s]+|/root)/(?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.config/gcloud|\.password-store|Documents|Desktop|Downloads|Mail|\.mail)(?:/|\s|$)` +
		`|\.(?:env|netrc|npmrc|pypirc|git-credentials|pgpass)(?:[./\s'"]|$)` +
		`|(?:id_rsa|id_ed25519|id_ecdsa|id_dsa)[^/\s]*(?:\s|$)` +
		`|[^/\s]+\.(?:pem|key|p12|pfx|kdbx)(?:[\s'"]|$)` +
		`|etc/(?:shadow|gshadow|sudoers)(?:[\s'"]|$)` +
		`|(?:secrets?|credentials?|private)(?:/|[\s'"]|$))`)
	shellFetchRE = regexp.MustCompile(`\b(?:curl|wget)\b[^|;&]*\bhttps?://`)
	shellSendRE  = regexp.MustCompile(`\bcurl\b[^|;&]*(?:\s-X\s*(?:POST|PUT|PATCH)\b|\s(?:-d|--data[a-z-]*|-F|--form|-T|--upload-file)(?:\s|=))` +
		`|\bwget\b[^|;&]*--post-(?:data|file)|\bsendmail\b|\bmail\s+-s\b`)
	localURLRE = regexp.MustCompile(`(?i)^https?://(?:localhost|127\.[0-9.]+|\[::1\])(?:[:/]|$)`)
	httpURLRE  = regexp.MustCompile(`(?i)^https?://[^/\s]`)
)

// flowEnvOptions declares the flow functions in Env.
func flowEnvOptions() []cel.EnvOption {
	opts := make([]cel.EnvOption, 0, len(flowFunctions))
	for _, f := range flowFunctions {
		fn := f.fn
		opts = append(opts, cel.Function(f.name, cel.Overload(f.name+"_dyn", []*cel.Type{cel.DynType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val { return types.Bool(fn(v.Value())) }))))
	}
	return opts
}

// isFlowOverload reports whether id is the overload of a flow function.
func isFlowOverload(id string) bool {
	for _, f := range flowFunctions {
		if id == f.name+"_dyn" {
			return true
		}
	}
	return false
}

// flowString is v when it is a string short enough to look at.
func flowString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && len(s) <= maxFlowString
}

func privatePath(v any) bool {
	switch t := v.(type) {
	case string:
		s, ok := flowString(t)
		return ok && privatePathRE.MatchString(s)
	case []any:
		for _, x := range t {
			if s, ok := flowString(x); ok && privatePathRE.MatchString(s) {
				return true
			}
		}
	case map[string]any:
		for _, k := range pathKeys {
			if x, ok := t[k]; ok && privatePath(x) {
				return true
			}
		}
		return privatePath(commandOf(t))
	}
	return false
}

// commandOf is a shell tool's command argument as one string ("" when
// none): a string, or a list of strings joined by spaces.
func commandOf(m map[string]any) string {
	switch c := m["command"].(type) {
	case string:
		return c
	case []any:
		parts := make([]string, 0, len(c))
		n := 0
		for _, x := range c {
			if s, ok := x.(string); ok && n+len(s) <= maxFlowString {
				parts = append(parts, s)
				n += len(s) + 1
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func matchCommand(v any, re *regexp.Regexp) bool {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case map[string]any:
		s = commandOf(t)
	}
	s, ok := flowString(s)
	return ok && s != "" && re.MatchString(s)
}

var privateMarks = []string{"private", "confidential", "secret", "personal"}

func privateMarked(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if marked(m) {
		return true
	}
	rs, _ := m["results"].([]any)
	for _, r := range rs {
		if rm, ok := r.(map[string]any); ok && marked(rm) {
			return true
		}
	}
	return false
}

func marked(m map[string]any) bool {
	if b, ok := m["private"].(bool); ok && b {
		return true
	}
	for _, k := range []string{"visibility", "scope", "classification"} {
		if s, ok := m[k].(string); ok {
			for _, p := range privateMarks {
				if strings.EqualFold(s, p) {
					return true
				}
			}
		}
	}
	return false
}

func externalURL(v any) bool {
	s, ok := flowString(v)
	return ok && httpURLRE.MatchString(s) && !localURLRE.MatchString(s)
}
