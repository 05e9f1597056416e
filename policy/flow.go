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
// Each takes a string, a list or a map (tool.args, payload) and reads at
// most maxFlowBytes of its strings in all (what lies beyond is not looked
// at), so its cost is bounded by a constant, whatever the event's size:
// the cost estimator charges it as one scan of maxFlowBytes.
//
//   - tool_name(s): the tool name s compared by the flow rules: lower
//     case, without an MCP prefix a host puts before it ("mcp__gmail__
//     send_email", Claude Code's form, is "send_email"); "" for a name
//     longer than maxToolName.
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
//   - destructive_command(x): what a shell command x (a string, an argv
//     list, or a map with a command or cmd member) would destroy, in a few
//     words — rm -rf /, mkfs, dd to a disk, a fork bomb, curl | sh …
//     (builtin_destructive.go) — or "".
var flowFunctions = []struct {
	name string
	fn   func(v any, b *budget) ref.Val
	// bind is the CEL binding: fn called directly, with its budget on the
	// stack and a string argument read without boxing it again.
	bind func(v ref.Val) ref.Val
}{
	{"tool_name", func(v any, _ *budget) ref.Val { return types.String(toolName(v)) }, toolNameVal},
	{"private_path", boolFn(privatePath), func(v ref.Val) ref.Val {
		b := budget{left: maxFlowBytes}
		if s, ok := v.(types.String); ok {
			return types.Bool(privatePath(string(s), &b))
		}
		return types.Bool(privatePath(v.Value(), &b))
	}},
	{"private_marked", boolFn(privateMarked), func(v ref.Val) ref.Val {
		if _, ok := v.(types.String); ok {
			return types.False // not a map
		}
		b := budget{left: maxFlowBytes}
		return types.Bool(privateMarked(v.Value(), &b))
	}},
	{"shell_fetch", boolFn(shellFetch), func(v ref.Val) ref.Val {
		b := budget{left: maxFlowBytes}
		if s, ok := v.(types.String); ok {
			return types.Bool(shellFetch(string(s), &b))
		}
		return types.Bool(shellFetch(v.Value(), &b))
	}},
	{"shell_send", boolFn(shellSend), func(v ref.Val) ref.Val {
		b := budget{left: maxFlowBytes}
		if s, ok := v.(types.String); ok {
			return types.Bool(shellSend(string(s), &b))
		}
		return types.Bool(shellSend(v.Value(), &b))
	}},
	{"external_url", boolFn(externalURL), func(v ref.Val) ref.Val {
		b := budget{left: maxFlowBytes}
		if s, ok := v.(types.String); ok {
			return types.Bool(externalURL(string(s), &b))
		}
		return types.Bool(externalURL(v.Value(), &b))
	}},
	{"destructive_command", func(v any, b *budget) ref.Val { return types.String(destructiveCommand(v, b)) }, func(v ref.Val) ref.Val {
		b := budget{left: maxFlowBytes}
		if s, ok := v.(types.String); ok {
			return types.String(destructiveCommand(string(s), &b))
		}
		return types.String(destructiveCommand(v.Value(), &b))
	}},
}

func boolFn(f func(any, *budget) bool) func(any, *budget) ref.Val {
	return func(v any, b *budget) ref.Val { return types.Bool(f(v, b)) }
}

// toolNameVal is the binding of tool_name: a name tool_name leaves as it is
// comes back as the same CEL value, so the common case allocates nothing.
func toolNameVal(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.String(toolName(v.Value()))
	}
	n := toolName(string(s))
	if n == string(s) {
		return v
	}
	return types.String(n)
}

func shellFetch(v any, b *budget) bool { return matchCommand(v, shellFetchRE, b) }
func shellSend(v any, b *budget) bool  { return matchCommand(v, shellSendRE, b) }

// maxFlowBytes bounds the bytes of strings one flow function call reads;
// maxToolName the tool names tool_name reads.
const (
	maxFlowBytes = 64 << 10
	maxToolName  = 256
)

// budget is what one call may still read.
type budget struct{ left int }

// take reports whether s fits the budget, and spends it.
func (b *budget) take(s string) bool {
	if len(s) > b.left {
		b.left = 0
		return false
	}
	b.left -= len(s)
	return true
}

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
		res := cel.BoolType
		if f.name == "tool_name" || f.name == "destructive_command" {
			res = cel.StringType
		}
		opts = append(opts, cel.Function(f.name, cel.Overload(f.name+"_dyn", []*cel.Type{cel.DynType}, res,
			cel.UnaryBinding(f.bind))))
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

// toolName is tool_name: s in lower case without a host's MCP prefix.
func toolName(v any) string {
	s, ok := v.(string)
	if !ok || len(s) > maxToolName {
		return ""
	}
	s = strings.ToLower(s)
	if rest, ok := strings.CutPrefix(s, "mcp__"); ok { // mcp__<server>__<tool>
		if i := strings.Index(rest, "__"); i >= 0 {
			return rest[i+2:]
		}
	}
	return s
}

func privatePath(v any, b *budget) bool {
	switch t := v.(type) {
	case string:
		return b.take(t) && matchPrivatePath(t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && b.take(s) && matchPrivatePath(s) {
				return true
			}
			if b.left == 0 {
				return false
			}
		}
	case map[string]any:
		for _, k := range pathKeys {
			if x, ok := t[k]; ok && privatePath(x, b) {
				return true
			}
		}
		if c := commandOf(t); c != "" {
			return privatePath(c, b)
		}
	}
	return false
}

// commandOf is a shell tool's command argument as one string ("" when
// none): a string, or a list of strings joined by spaces (at most
// maxFlowBytes of them).
func commandOf(m map[string]any) string {
	switch c := m["command"].(type) {
	case string:
		return c
	case []any:
		parts := make([]string, 0, len(c))
		n := 0
		for _, x := range c {
			s, ok := x.(string)
			if !ok {
				continue
			}
			if n += len(s) + 1; n > maxFlowBytes {
				break
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func matchCommand(v any, re *regexp.Regexp, b *budget) bool {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case map[string]any:
		s = commandOf(t)
	}
	return s != "" && b.take(s) && re.MatchString(s)
}

var privateMarks = []string{"private", "confidential", "secret", "personal"}

func privateMarked(v any, b *budget) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if marked(m, b) {
		return true
	}
	rs, _ := m["results"].([]any)
	for _, r := range rs {
		if rm, ok := r.(map[string]any); ok && marked(rm, b) {
			return true
		}
		if b.left == 0 {
			return false
		}
	}
	return false
}

func marked(m map[string]any, b *budget) bool {
	if x, ok := m["private"].(bool); ok && x {
		return true
	}
	for _, k := range []string{"visibility", "scope", "classification"} {
		if s, ok := m[k].(string); ok && b.take(s) {
			for _, p := range privateMarks {
				if strings.EqualFold(s, p) {
					return true
				}
			}
		}
	}
	b.take(" ") // every item costs something, so a long list ends
	return false
}

func externalURL(v any, b *budget) bool {
	s, ok := v.(string)
	return ok && b.take(s) && httpURLRE.MatchString(s) && !localURLRE.MatchString(s)
}
