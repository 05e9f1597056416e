package hostadapter_test

import (
	"os"
	"path/filepath"
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
