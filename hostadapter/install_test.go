package hostadapter_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/hostadapter"
)

const cmdLine = "/usr/local/bin/warden hook claude-code --data /var/lib/warden"

// existing is a Claude Code settings file with keys and hooks of its own.
const existing = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --check"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
  },
  "env": {"X": "1"}
}
`

func TestMergeKeepsEverything(t *testing.T) {
	out, added, err := hostadapter.Merge("claude-code", []byte(existing), cmdLine)
	if err != nil {
		t.Fatal(err)
	}
	if added != 5 {
		t.Errorf("added %d entries, want 5 (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Notification)", added)
	}
	s := string(out)
	for _, keep := range []string{`"model": "opus"`, `"Bash(ls:*)"`, `"prettier --check"`, `"say done"`, `"X": "1"`} {
		if !strings.Contains(s, keep) {
			t.Errorf("lost %s:\n%s", keep, s)
		}
	}
	// Order kept: model before permissions before hooks before env; the
	// existing PreToolUse entry stays first.
	if !(strings.Index(s, `"model"`) < strings.Index(s, `"permissions"`) && strings.Index(s, `"hooks"`) < strings.Index(s, `"env"`)) {
		t.Errorf("key order changed:\n%s", s)
	}
	if strings.Index(s, "prettier") > strings.Index(s, "/usr/local/bin/warden hook claude-code --data /var/lib/warden") {
		t.Errorf("existing PreToolUse entry no longer first:\n%s", s)
	}
	again, added2, err := hostadapter.Merge("claude-code", out, cmdLine)
	if err != nil {
		t.Fatal(err)
	}
	if added2 != 0 || string(again) != s {
		t.Errorf("second merge added %d and changed the file:\n%s", added2, again)
	}
}

func TestMergeGolden(t *testing.T) {
	for _, host := range sortedHosts() {
		t.Run(host, func(t *testing.T) {
			out, _, err := hostadapter.Merge(host, nil, "/usr/local/bin/warden hook "+host)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "install", host+".json")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != string(out) {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"not JSON":          {"{\n  \"a\": 1,\n}\n", "not valid JSON: line 3, column 1: invalid character '}' looking for beginning of object key string"},
		"comments":          {"// mine\n{}", "not valid JSON: line 1, column 1: invalid character '/' looking for beginning of value"},
		"not an object":     {`[]`, "not a JSON object"},
		"hooks not object":  {`{"hooks": []}`, `"hooks" is not an object`},
		"event not array":   {`{"hooks": {"PreToolUse": {}}}`, `"hooks.PreToolUse" is not an array`},
		"group not object":  {`{"hooks": {"PreToolUse": [1]}}`, `"hooks.PreToolUse[0]" is not an object`},
		"duplicate keys":    {`{"hooks": {}, "hooks": {}}`, `not valid JSON: duplicate key "hooks" at the top level`},
		"two values":        {`{} {}`, "not valid JSON: line 1, column 4: invalid character '{' after top-level value"},
		"group hooks array": {`{"hooks": {"PreToolUse": [{"hooks": "x"}]}}`, `"hooks.PreToolUse[0].hooks" is not an array`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := hostadapter.Merge("claude-code", []byte(c.in), cmdLine)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %s", err, c.want)
			}
		})
	}
}

func TestInstallFile(t *testing.T) {
	dir := t.TempDir()
	path, err := hostadapter.SettingsPath("claude-code", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, ".claude", "settings.json") {
		t.Fatalf("path %s", path)
	}
	// A new file, with its directory.
	if _, added, err := hostadapter.Install("claude-code", path, cmdLine, false); err != nil || added != 5 {
		t.Fatalf("added %d, %v", added, err)
	}
	// Permissions kept, through a symlink to the real file.
	real := filepath.Join(dir, "real-settings.json")
	if err := os.WriteFile(real, []byte(existing), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hostadapter.Install("claude-code", link, cmdLine, false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	fi, err = os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(real)
	if !strings.Contains(string(b), cmdLine) || !strings.Contains(string(b), "say done") {
		t.Errorf("merged file:\n%s", b)
	}
	// Dry run writes nothing; a refused file is left as it was.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{oops"), 0o644)
	if _, _, err := hostadapter.Install("claude-code", bad, cmdLine, false); err == nil || !strings.Contains(err.Error(), "bad.json: not valid JSON: line 1, column 2") {
		t.Errorf("got %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != "{oops" {
		t.Errorf("refused file changed: %q", b)
	}
	fresh := filepath.Join(dir, "fresh", "settings.json")
	if out, added, err := hostadapter.Install("cursor", fresh, cmdLine, true); err != nil || added == 0 || !strings.Contains(string(out), `"version": 1`) {
		t.Fatalf("dry run: %d %v\n%s", added, err, out)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("dry run wrote %s", fresh)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".claude"))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestCommandQuoting(t *testing.T) {
	got := hostadapter.Command("/opt/my tools/warden", "hook", "claude-code", "--data", "/var/lib/warden", "--policy", "it's.yaml")
	want := `'/opt/my tools/warden' hook claude-code --data /var/lib/warden --policy 'it'\''s.yaml'`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestUnmerge: for every host, merging warden's entries into a settings
// file with the person's own hooks and then removing them gives back the
// same JSON (keys, hooks and order); content with no warden entry comes
// back byte for byte; another host's warden entries are not touched.
func TestUnmerge(t *testing.T) {
	own := map[string]string{
		"claude-code": existing,
		"codex":       `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}`,
		"gemini":      `{"theme": "dark", "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"name": "fmt", "type": "command", "command": "fmt-check"}]}]}}`,
		"cursor":      `{"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}], "stop": [{"command": "say done"}]}}`,
	}
	for _, host := range sortedHosts() {
		t.Run(host, func(t *testing.T) {
			mine := []byte(own[host])
			cmd := "/usr/local/bin/warden hook " + host + " --data /var/lib/warden"
			merged, added, err := hostadapter.Merge(host, mine, cmd)
			if err != nil || added == 0 {
				t.Fatalf("merge: %d %v", added, err)
			}
			// Another host's entry (a hand-written one in the same file) stays.
			other := "warden hook another-host"
			back, removed, err := hostadapter.Unmerge(host, merged, "/usr/local/bin/warden")
			if err != nil || removed != added {
				t.Fatalf("unmerge: removed %d of %d, %v", removed, added, err)
			}
			var a, b any
			json.Unmarshal(mine, &a)
			json.Unmarshal(back, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("after install and uninstall:\n%s\nwant (as JSON)\n%s", back, mine)
			}
			same, removed, err := hostadapter.Unmerge(host, mine, "/usr/local/bin/warden")
			if err != nil || removed != 0 || !bytes.Equal(same, mine) {
				t.Errorf("nothing to remove: %d %v\n%s", removed, err, same)
			}
			if hostadapter.Owns(host, "/usr/local/bin/warden", other) {
				t.Errorf("owns %q", other)
			}
		})
	}
}

// TestMergeReplacesOwnEntry: installing again with other flags, from
// another path of a binary named warden, or with --command naming another
// binary, replaces warden's entry in place (one warden entry per event);
// the person's own entries stay where they were.
func TestMergeReplacesOwnEntry(t *testing.T) {
	first, _, err := hostadapter.Merge("claude-code", []byte(existing), cmdLine)
	if err != nil {
		t.Fatal(err)
	}
	again := "/home/ann/go/bin/warden hook claude-code --data /home/ann/.local/state/warden"
	second, changed, err := hostadapter.Merge("claude-code", first, again)
	if err != nil || changed != 5 {
		t.Fatalf("changed %d, %v", changed, err)
	}
	s := string(second)
	if strings.Contains(s, cmdLine) || strings.Count(s, again) != 5 || strings.Index(s, "prettier") > strings.Index(s, again) {
		t.Errorf("not replaced in place:\n%s", s)
	}
	third, changed, err := hostadapter.Merge("claude-code", second, "/opt/other hook claude-code")
	if err != nil || changed != 5 || strings.Contains(string(third), again) || strings.Count(string(third), "/opt/other hook claude-code") != 5 ||
		!strings.Contains(string(third), "prettier --check") || !strings.Contains(string(third), "say done") {
		t.Errorf("--command another binary: %d %v\n%s", changed, err, third)
	}
}

func TestOwns(t *testing.T) {
	for _, c := range []struct {
		host, exe, cmd string
		want           bool
	}{
		{"claude-code", "", "/usr/local/bin/warden hook claude-code", true},
		{"claude-code", "", "warden hook claude-code --data /x", true},
		{"claude-code", "", "'/opt/my tools/warden' hook claude-code", true},
		{"claude-code", "/opt/w/wd", "/opt/w/wd hook claude-code --server http://x", true},
		{"claude-code", "/opt/w/wd", "/opt/w/other hook claude-code", false},
		{"claude-code", "", "/usr/local/bin/warden hook codex", false},
		{"claude-code", "", "/usr/local/bin/warden hooks dispatch tool.pre_call", false},
		{"claude-code", "", "prettier --check", false},
		{"claude-code", "", "'unterminated hook claude-code", false},
		{"gemini", "", `"/usr/local/bin/warden" hook gemini`, true},
	} {
		if got := hostadapter.Owns(c.host, c.exe, c.cmd); got != c.want {
			t.Errorf("Owns(%q, %q, %q) = %v", c.host, c.exe, c.cmd, got)
		}
	}
}
