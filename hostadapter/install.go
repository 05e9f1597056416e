package hostadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/jsonstrict"
)

// maxSettings bounds a settings file Install reads: 16 MiB.
const maxSettings = 16 << 20

// hookTimeout is the timeout Install gives each entry where the host
// takes one: 30s, above DefaultTimeout so warden answers (fail-closed)
// before the host gives up on it.
const hookTimeout = 30

// layout is where a host keeps its hooks and how one entry looks.
type layout struct {
	file    string   // relative to the project or the home directory
	events  []string // the events warden is installed on, in this order
	gates   map[string]bool
	matcher map[string]string // a matcher for these events
	entry   func(command, event string) *object
	grouped bool // entries sit in {matcher, hooks: [entry]} groups
	version bool // the file has "version": 1 (Cursor)
}

var layouts = map[string]layout{
	"claude-code": {
		file:    filepath.Join(".claude", "settings.json"),
		events:  []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification"},
		matcher: map[string]string{"PreToolUse": "*", "PostToolUse": "*"},
		grouped: true,
		entry: func(c, _ string) *object {
			return obj("type", "command", "command", c, "timeout", json.Number(fmt.Sprint(hookTimeout)))
		},
	},
	"codex": {
		file:    filepath.Join(".codex", "hooks.json"),
		events:  []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"},
		matcher: map[string]string{"PreToolUse": "*", "PostToolUse": "*"},
		grouped: true,
		entry: func(c, _ string) *object {
			return obj("type", "command", "command", c, "timeout", json.Number(fmt.Sprint(hookTimeout)), "statusMessage", "Checking with warden")
		},
	},
	"cursor": {
		file: filepath.Join(".cursor", "hooks.json"),
		events: []string{"sessionStart", "beforeSubmitPrompt", "preToolUse", "postToolUse", "beforeShellExecution",
			"afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "subagentStart", "afterAgentResponse", "stop"},
		gates:   map[string]bool{"beforeSubmitPrompt": true, "preToolUse": true, "beforeShellExecution": true, "beforeMCPExecution": true, "subagentStart": true},
		version: true,
	},
	"gemini": {
		file:    filepath.Join(".gemini", "settings.json"),
		events:  []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"},
		grouped: true,
		entry: func(c, _ string) *object {
			return obj("name", "warden", "type", "command", "command", c, "timeout", json.Number(fmt.Sprint(hookTimeout*1000)))
		},
	},
}

func init() {
	l := layouts["cursor"]
	l.entry = func(c, ev string) *object {
		o := obj("command", c)
		if l.gates[ev] {
			o.set("failClosed", true)
		}
		return o
	}
	layouts["cursor"] = l
}

func obj(kv ...any) *object {
	o := newObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// SettingsPath is the file Install writes for host: under project when it
// is set (the project's own settings), else under home (the user's).
func SettingsPath(host, project, home string) (string, error) {
	l, ok := layouts[host]
	if !ok {
		_, err := Lookup(host)
		return "", err
	}
	dir := project
	if dir == "" {
		dir = home
	}
	return filepath.Join(dir, l.file), nil
}

// Merge adds warden's hook entries, running command, to a host's settings
// file content (nil or blank: a new file) and returns the new content and
// how many entries it added or changed. An event that already runs
// exactly command is left alone, so merging twice changes nothing; an
// event whose entry is an earlier warden install for the host (Owns, with
// command's binary) gets that entry's command replaced in place, so
// installing again with other flags leaves one warden entry per event.
// Every other key, hook and entry is kept, in its order. Content that is
// not a JSON object, or whose hooks are not shaped as the host reads
// them, is refused with an error naming the place.
func Merge(host string, content []byte, command string) ([]byte, int, error) {
	l, root, hooks, err := parseSettings(host, content, true)
	if err != nil {
		return nil, 0, err
	}
	exe := ""
	if w, ok := splitWords(command); ok && len(w) > 0 {
		exe = w[0]
	}
	changed := 0
	for _, ev := range l.events {
		list, err := eventList(hooks, ev)
		if err != nil {
			return nil, 0, err
		}
		present, owned, err := find(list, l.grouped, ev, func(c string) bool { return c == command },
			func(c string) bool { return Owns(host, exe, c) })
		if err != nil {
			return nil, 0, err
		}
		switch {
		case present:
			continue
		case owned != nil:
			owned.set("command", command)
			changed++
			continue
		}
		e := l.entry(command, ev)
		if l.grouped {
			g := newObject()
			if m, ok := l.matcher[ev]; ok {
				g.set("matcher", m)
			}
			g.set("hooks", []any{e})
			e = g
		}
		hooks.set(ev, append(list, e))
		changed++
	}
	out, err := writeOrdered(root)
	return out, changed, err
}

// Unmerge removes warden's own hook entries for host from a settings
// file's content: every entry, on any event, whose command Owns
// recognizes with exe. A group (Claude Code, Codex, Gemini CLI) left
// with no entry is removed, an event left with no group or entry is
// removed, and "hooks" itself when nothing is left in it; every other
// key, hook and entry is kept, in its order. It returns the new content
// and how many entries it removed (0: content is returned as it was).
func Unmerge(host string, content []byte, exe string) ([]byte, int, error) {
	l, root, hooks, err := parseSettings(host, content, false)
	if err != nil || hooks == nil {
		return content, 0, err
	}
	owns := func(c string) bool { return Owns(host, exe, c) }
	removed := 0
	for _, ev := range append([]string(nil), hooks.keys...) {
		list, err := eventList(hooks, ev)
		if err != nil {
			return nil, 0, err
		}
		var keep []any
		for i, it := range list {
			o, ok := it.(*object)
			if !ok {
				return nil, 0, fmt.Errorf(`"hooks.%s[%d]" is not an object`, ev, i)
			}
			if !l.grouped {
				if c, _ := o.get("command"); isOwned(c, owns) {
					removed++
					continue
				}
				keep = append(keep, o)
				continue
			}
			hv, has := o.get("hooks")
			if !has {
				keep = append(keep, o)
				continue
			}
			entries, ok := hv.([]any)
			if !ok {
				return nil, 0, fmt.Errorf(`"hooks.%s[%d].hooks" is not an array`, ev, i)
			}
			var left []any
			for _, e := range entries {
				if eo, ok := e.(*object); ok {
					if c, _ := eo.get("command"); isOwned(c, owns) {
						removed++
						continue
					}
				}
				left = append(left, e)
			}
			switch {
			case len(left) == len(entries):
				keep = append(keep, o)
			case len(left) > 0:
				o.set("hooks", left)
				keep = append(keep, o)
			}
		}
		switch {
		case len(keep) == len(list):
		case len(keep) == 0:
			hooks.del(ev)
		default:
			hooks.set(ev, keep)
		}
	}
	if removed == 0 {
		return content, 0, nil
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	}
	out, err := writeOrdered(root)
	return out, removed, err
}

func isOwned(c any, owns func(string) bool) bool {
	s, ok := c.(string)
	return ok && owns(s)
}

// parseSettings reads a settings file's content: its layout, the root
// object and its "hooks" object (created, with Cursor's version, when
// create is set; else nil when absent).
func parseSettings(host string, content []byte, create bool) (layout, *object, *object, error) {
	l, ok := layouts[host]
	if !ok {
		_, err := Lookup(host)
		return l, nil, nil, err
	}
	root := newObject()
	if len(strings.TrimSpace(string(content))) > 0 {
		v, err := parseOrdered(content)
		if err != nil {
			return l, nil, nil, fmt.Errorf("not valid JSON: %v", syntaxWhere(content, err))
		}
		if err := jsonstrict.Check(content); err != nil { // duplicate keys: one would be lost
			return l, nil, nil, fmt.Errorf("not valid JSON: %v", err)
		}
		o, isObj := v.(*object)
		if !isObj {
			return l, nil, nil, errors.New("not a JSON object")
		}
		root = o
	}
	if create && l.version {
		if _, has := root.get("version"); !has {
			root.set("version", json.Number("1"))
		}
	}
	hv, has := root.get("hooks")
	if !has {
		if !create {
			return l, root, nil, nil
		}
		hv = newObject()
		root.set("hooks", hv)
	}
	hooks, isObj := hv.(*object)
	if !isObj {
		return l, nil, nil, errors.New(`"hooks" is not an object`)
	}
	return l, root, hooks, nil
}

// eventList is the array of an event's entries (nil when absent).
func eventList(hooks *object, ev string) ([]any, error) {
	v, has := hooks.get(ev)
	if !has {
		return nil, nil
	}
	a, isArr := v.([]any)
	if !isArr {
		return nil, fmt.Errorf(`"hooks.%s" is not an array`, ev)
	}
	return a, nil
}

// find looks through an event's entries for one whose command is exactly
// the one installed (present), else for the first one warden owns.
func find(list []any, grouped bool, ev string, exact, owns func(string) bool) (bool, *object, error) {
	var owned *object
	for i, it := range list {
		o, ok := it.(*object)
		if !ok {
			return false, nil, fmt.Errorf(`"hooks.%s[%d]" is not an object`, ev, i)
		}
		entries := []any{o}
		if grouped {
			hv, has := o.get("hooks")
			if !has {
				continue
			}
			if entries, ok = hv.([]any); !ok {
				return false, nil, fmt.Errorf(`"hooks.%s[%d].hooks" is not an array`, ev, i)
			}
		}
		for _, e := range entries {
			eo, ok := e.(*object)
			if !ok {
				continue
			}
			cv, _ := eo.get("command")
			c, _ := cv.(string)
			switch {
			case c == "":
			case exact(c):
				return true, nil, nil
			case owned == nil && owns(c):
				owned = eo
			}
		}
	}
	return false, owned, nil
}

// Owns reports whether a hook command is warden's entry for host: the
// shell words `EXE hook HOST ...`, EXE being exe (the binary installed)
// or any path whose file name is warden. A person's own hooks never have
// that shape unless they run warden themselves.
func Owns(host, exe, command string) bool {
	w, ok := splitWords(command)
	if !ok || len(w) < 3 || w[1] != "hook" || w[2] != host {
		return false
	}
	return w[0] == exe && exe != "" || filepath.Base(w[0]) == "warden"
}

// splitWords splits a command line into its words as sh would, for the
// quoting Command writes and hand-written entries use: single quotes,
// double quotes (with \ escapes) and backslashes. ok is false for an
// unterminated quote; expansions ($VAR, globs) are left as written.
func splitWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// syntaxWhere names the line and column of a JSON syntax error. The
// position comes from encoding/json's scanner (json.Unmarshal), whose
// offset is the byte just past the offending one.
func syntaxWhere(b []byte, err error) error {
	var v any
	uerr := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if !errors.As(uerr, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errors.New("unexpected end of input (the JSON is cut short)")
		}
		return err
	}
	if strings.HasPrefix(se.Error(), "unexpected end of JSON input") {
		return errors.New("unexpected end of input (the JSON is cut short)")
	}
	at := int(se.Offset) - 1
	if at < 0 {
		at = 0
	}
	if at > len(b) {
		at = len(b)
	}
	line := 1 + strings.Count(string(b[:at]), "\n")
	col := at - strings.LastIndex(string(b[:at]), "\n")
	return fmt.Errorf("line %d, column %d: %v", line, col, se)
}

// Install merges warden's entries into path (created with its directory
// when absent) and returns the merged content and how many entries were
// added or changed (Merge). With dryRun nothing is written. The file is
// replaced atomically (a temporary file in the same directory, renamed
// over it) and keeps its permission bits; a symlink is followed, so its
// target is what changes.
func Install(host, path, command string, dryRun bool) ([]byte, int, error) {
	return rewrite(path, dryRun, true, func(content []byte) ([]byte, int, error) {
		return Merge(host, content, command)
	})
}

// Uninstall removes warden's own entries for host from path (Unmerge,
// recognizing exe as warden's binary) and returns the new content and
// how many entries were removed. A file that is absent or has none is
// left untouched. Written as Install writes.
func Uninstall(host, path, exe string, dryRun bool) ([]byte, int, error) {
	return rewrite(path, dryRun, false, func(content []byte) ([]byte, int, error) {
		return Unmerge(host, content, exe)
	})
}

// rewrite reads path (bounded), has change make its new content, and
// writes it back atomically when something changed. An absent file is
// empty content when create is set, else nothing to change.
func rewrite(path string, dryRun, create bool, change func([]byte) ([]byte, int, error)) ([]byte, int, error) {
	real := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		real = p
	}
	mode := fs.FileMode(0o644)
	var content []byte
	info, err := os.Stat(real)
	switch {
	case err == nil:
		if !info.Mode().IsRegular() {
			return nil, 0, fmt.Errorf("%s: not a regular file", path)
		}
		if info.Size() > maxSettings {
			return nil, 0, fmt.Errorf("%s: larger than %d bytes", path, maxSettings)
		}
		mode = info.Mode().Perm()
		if content, err = os.ReadFile(real); err != nil {
			return nil, 0, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, 0, err
	case !create:
		return nil, 0, nil
	}
	out, n, err := change(content)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w; not changed", path, err)
	}
	if dryRun || n == 0 {
		return out, n, nil
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return nil, 0, err
	}
	if err := writeAtomic(real, out, mode); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return out, n, nil
}

func writeAtomic(path string, b []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".warden-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename there is nothing to remove
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Command renders a hook command line: each word quoted for the shell
// that hosts run it with (sh -c) when it needs to be.
func Command(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
