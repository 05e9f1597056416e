package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestHookInstall: install writes the project's settings file, prints it
// and the data directory, and is idempotent (a second run leaves the file
// byte for byte); --dry-run writes nothing; an invalid file is refused.
func TestHookInstall(t *testing.T) {
	project := t.TempDir()
	args := []string{"hook", "install", "gemini", "--project", project, "--command", "/opt/warden/bin/warden", "--", "--server", "http://127.0.0.1:8787"}
	out, errs, code := runCmd(t, "", args...)
	path := filepath.Join(project, ".gemini", "settings.json")
	want := "settings file: " + path + " (5 hook entries added or updated, running /opt/warden/bin/warden hook gemini --server http://127.0.0.1:8787)\n" +
		"data directory: none (decided by the --server warden)\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	first, _ := os.ReadFile(path)
	out, _, code = runCmd(t, "", args...)
	second, _ := os.ReadFile(path)
	if code != 0 || !strings.Contains(out, "nothing changed") || !bytes.Equal(first, second) {
		t.Errorf("second install: %d %s", code, out)
	}
	out, _, code = runCmd(t, "", "hook", "install", "claude-code", "--project", project, "--command", "/w", "--data", "/var/lib/warden", "--dry-run")
	if code != 0 || !strings.Contains(out, `"command": "/w hook claude-code --data /var/lib/warden"`) {
		t.Errorf("dry run: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(project, ".claude")); !os.IsNotExist(err) {
		t.Errorf("dry run wrote .claude")
	}
	os.MkdirAll(filepath.Join(project, ".cursor"), 0o755)
	os.WriteFile(filepath.Join(project, ".cursor", "hooks.json"), []byte(`{"version": 1, "hooks": {"stop": [{"command": "x"}],}}`), 0o644)
	_, errs, code = runCmd(t, "", "hook", "install", "cursor", "--project", project, "--command", "/w")
	if code != 1 || !strings.Contains(errs, "hooks.json: not valid JSON: line 1, column 53: invalid character '}' looking for beginning of object key string; not changed") {
		t.Errorf("invalid file: %d %s", code, errs)
	}
}

// TestHookInstallData: the hook's --data is absolute: by default the one
// per-user state directory ($XDG_STATE_HOME/warden, else
// ~/.local/state/warden), or --data (of install, or among the hook flags)
// made absolute; the directory is created and printed. Installing again
// with other flags replaces warden's entry in place: one per event.
func TestHookInstallData(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	entries := func() []string {
		b, _ := os.ReadFile(path)
		var v struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string }
			}
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var cmds []string
		for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification"} {
			for _, g := range v.Hooks[ev] {
				for _, h := range g.Hooks {
					cmds = append(cmds, h.Command)
				}
			}
		}
		return cmds
	}
	dir := filepath.Join(state, "warden")
	out, errs, code := runCmd(t, "", "hook", "install", "claude-code", "--project", project, "--command", "/opt/w/warden")
	if code != 0 || !strings.Contains(out, "settings file: "+path+" (5 hook entries") || !strings.HasSuffix(out, "data directory: "+dir+"\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v %v", fi, err)
	}
	want := "/opt/w/warden hook claude-code --data " + dir
	for _, c := range entries() {
		if c != want {
			t.Errorf("entry runs %q, want %q", c, want)
		}
	}
	// --data among the hook flags, relative: made absolute; the entries
	// are replaced in place, not added beside the first ones.
	t.Chdir(project)
	out, errs, code = runCmd(t, "", "hook", "install", "claude-code", "--project", ".", "--command", "/opt/w/warden", "--", "--data", "trace", "--timeout", "5s")
	abs := filepath.Join(project, "trace")
	want = "/opt/w/warden hook claude-code --data " + abs + " --timeout 5s"
	if code != 0 || !strings.Contains(out, "(5 hook entries added or updated, running "+want+")") || !strings.Contains(out, "data directory: "+abs) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if got := entries(); len(got) != 5 || got[0] != want || got[4] != want {
		t.Errorf("entries after a second install with other flags: %q", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", "a", "--", "--data", "b"}, "--data is given both to install and among the hook flags; give it once"},
		{[]string{"--", "--server", "http://127.0.0.1:8787", "--data", "b"}, "--data decides in-process only; with --server the server's trace records"},
		{[]string{"--", "--data"}, "--data among the hook flags needs a directory"},
	} {
		args := append([]string{"hook", "install", "codex", "--project", project, "--command", "/w"}, c.args...)
		if _, errs, code := runCmd(t, "", args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d %s", c.args, code, errs)
		}
	}
}

// TestHookInstallRefusesGoRun: a binary `go run` built (Go's build cache
// in Go 1.24 and later, a go-build… temporary directory before) is not
// written into a settings file: one line saying what to do instead, and no
// file.
func TestHookInstallRefusesGoRun(t *testing.T) {
	project := t.TempDir()
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	for _, exe := range []string{
		filepath.Join(os.TempDir(), "go-build3141592653", "b001", "exe", "warden"),
		"/home/ann/.cache/go-build/7d/7d2f6ca8c5aae7c6-d/warden",
		filepath.Join(cache, "7d", "7d2f6ca8c5aae7c6-d", "warden"),
	} {
		_, errs, code := runCmd(t, "", "hook", "install", "claude-code", "--project", project, "--command", exe)
		want := "warden: hook install: " + exe + " is a `go run` build, which Go removes: `go install github.com/wardenhq/warden/cmd/warden@latest` and run that, or pass --command PATH\n"
		if code != 1 || errs != want {
			t.Errorf("%s: exit %d %q", exe, code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".claude")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote .claude")
	}
	if goRunBuild("/usr/local/bin/warden") || goRunBuild(filepath.Join(os.TempDir(), "tools", "warden")) || goRunBuild("/home/ann/go/bin/warden") {
		t.Error("goRunBuild refuses an installed binary")
	}
}

// TestHookUninstall: uninstall removes exactly warden's entries for the
// host — the person's own hooks, keys and order stay, and a file with no
// warden entry is left byte for byte.
func TestHookUninstall(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	const mine = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --check"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
  }
}
`
	os.WriteFile(path, []byte(mine), 0o600)
	if _, errs, code := runCmd(t, "", "hook", "install", "claude-code", "--project", project, "--command", "/opt/w/warden", "--data", "/var/lib/warden"); code != 0 {
		t.Fatal(errs)
	}
	// A Codex install in the same project is another host's: kept.
	if _, errs, code := runCmd(t, "", "hook", "install", "codex", "--project", project, "--command", "/opt/w/warden", "--data", "/var/lib/warden"); code != 0 {
		t.Fatal(errs)
	}
	codex, _ := os.ReadFile(filepath.Join(project, ".codex", "hooks.json"))
	out, errs, code := runCmd(t, "", "hook", "uninstall", "claude-code", "--project", project, "--command", "/opt/w/warden")
	if code != 0 || out != "settings file: "+path+" (5 warden hook entries removed)\n" {
		t.Fatalf("exit %d %s%s", code, out, errs)
	}
	got, _ := os.ReadFile(path)
	var a, b any
	json.Unmarshal([]byte(mine), &a)
	json.Unmarshal(got, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("after uninstall:\n%s\nwant (as JSON)\n%s", got, mine)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if after, _ := os.ReadFile(filepath.Join(project, ".codex", "hooks.json")); !bytes.Equal(after, codex) {
		t.Errorf("the codex settings changed")
	}
	// Nothing left to remove: the file is not rewritten.
	os.WriteFile(path, []byte(mine), 0o600)
	out, _, code = runCmd(t, "", "hook", "uninstall", "claude-code", "--project", project)
	if after, _ := os.ReadFile(path); code != 0 || !strings.Contains(out, "nothing changed") || string(after) != mine {
		t.Errorf("uninstall with nothing to remove: %d %s\n%s", code, out, after)
	}
	// An absent file: nothing to do.
	out, _, code = runCmd(t, "", "hook", "uninstall", "gemini", "--project", project)
	if code != 0 || !strings.Contains(out, "nothing changed") {
		t.Errorf("absent file: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(project, ".gemini")); !os.IsNotExist(err) {
		t.Errorf("uninstall created .gemini")
	}
	// The usage names uninstall.
	_, errs, _ = runCmd(t, "", "hook", "-h")
	if !strings.Contains(errs, "hook uninstall HOST [--project DIR]") || !strings.Contains(errs, "[--command PATH]") {
		t.Errorf("usage: %s", errs)
	}
}
