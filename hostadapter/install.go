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
// how many entries it added. An event that already runs exactly command
// is left alone, so merging twice adds nothing; every other key, hook and
// entry is kept, in its order. Content that is not a JSON object, or whose
// hooks are not shaped as the host reads them, is refused with an error
// naming the place.
func Merge(host string, content []byte, command string) ([]byte, int, error) {
	l, ok := layouts[host]
	if !ok {
		_, err := Lookup(host)
		return nil, 0, err
	}
	root := newObject()
	if len(strings.TrimSpace(string(content))) > 0 {
		v, err := parseOrdered(content)
		if err != nil {
			return nil, 0, fmt.Errorf("not valid JSON: %v", syntaxWhere(content, err))
		}
		if err := jsonstrict.Check(content); err != nil { // duplicate keys: one would be lost
			return nil, 0, fmt.Errorf("not valid JSON: %v", err)
		}
		o, isObj := v.(*object)
		if !isObj {
			return nil, 0, errors.New("not a JSON object")
		}
		root = o
	}
	if l.version {
		if _, has := root.get("version"); !has {
			root.set("version", json.Number("1"))
		}
	}
	hv, has := root.get("hooks")
	if !has {
		hv = newObject()
		root.set("hooks", hv)
	}
	hooks, isObj := hv.(*object)
	if !isObj {
		return nil, 0, errors.New(`"hooks" is not an object`)
	}
	added := 0
	for _, ev := range l.events {
		var list []any
		if v, has := hooks.get(ev); has {
			a, isArr := v.([]any)
			if !isArr {
				return nil, 0, fmt.Errorf(`"hooks.%s" is not an array`, ev)
			}
			list = a
		}
		present, err := runs(list, command, l.grouped, ev)
		if err != nil {
			return nil, 0, err
		}
		if present {
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
		added++
	}
	out, err := writeOrdered(root)
	return out, added, err
}

// runs reports whether an event's entries already run command.
func runs(list []any, command string, grouped bool, ev string) (bool, error) {
	for i, it := range list {
		o, ok := it.(*object)
		if !ok {
			return false, fmt.Errorf(`"hooks.%s[%d]" is not an object`, ev, i)
		}
		entries := []any{o}
		if grouped {
			hv, has := o.get("hooks")
			if !has {
				continue
			}
			if entries, ok = hv.([]any); !ok {
				return false, fmt.Errorf(`"hooks.%s[%d].hooks" is not an array`, ev, i)
			}
		}
		for _, e := range entries {
			if eo, ok := e.(*object); ok {
				if c, _ := eo.get("command"); c == command {
					return true, nil
				}
			}
		}
	}
	return false, nil
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
// added. With dryRun nothing is written. The file is replaced atomically
// (a temporary file in the same directory, renamed over it) and keeps its
// permission bits; a symlink is followed, so its target is what changes.
func Install(host, path, command string, dryRun bool) ([]byte, int, error) {
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
	}
	merged, added, err := Merge(host, content, command)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w; not changed", path, err)
	}
	if dryRun || added == 0 {
		return merged, added, nil
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return nil, 0, err
	}
	if err := writeAtomic(real, merged, mode); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return merged, added, nil
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
