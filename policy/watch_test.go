package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const onePolicy = "id: %s\nversion: \"1\"\nevents: [e]\ndecision: allow\n"

func TestReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", fmt.Sprintf(onePolicy, "a"))
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	writeFile(t, dir, "b.yaml", fmt.Sprintf(onePolicy, "b"))
	if err := e.Reload([]string{dir}); err != nil || e.Set().Len() != 2 {
		t.Fatalf("Reload = %v, %d policies", err, e.Set().Len())
	}
	bad := writeFile(t, dir, "c.yaml", "id: c\nversion: \"1\"\nevents: [e]\ndecision: nope\n")
	err = e.Reload([]string{dir})
	if err == nil || err.Error() != bad+`:4: unknown decision "nope" (want allow, deny, modify or ask)` {
		t.Fatalf("Reload bad = %v", err)
	}
	if e.Set().Len() != 2 {
		t.Fatal("failed reload replaced the set")
	}
	if err := e.Reload(nil); err != nil || e.Set().Get("deny-secrets-in-tool-calls") == nil {
		t.Fatalf("Reload(nil) = %v: want the built-in pack", err)
	}
}

// logSink collects log lines for Watch.
type logSink struct {
	mu    sync.Mutex
	lines []string
	ch    chan string
}

func (l *logSink) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	l.ch <- line
}

func (l *logSink) next(t *testing.T) string {
	t.Helper()
	select {
	case line := <-l.ch:
		return line
	case <-time.After(5 * time.Second):
		t.Fatal("no reload logged within 5s")
		return ""
	}
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "single.yaml") // a file outside dir
	writeFile(t, dir, "a.yaml", fmt.Sprintf(onePolicy, "a"))
	writeFile(t, filepath.Dir(file), "single.yaml", fmt.Sprintf(onePolicy, "s"))
	paths := []string{dir, file}
	s, err := Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	log := &logSink{ch: make(chan string, 16)}
	done := make(chan error, 1)
	go func() { done <- e.Watch(ctx, paths, log.logf) }()
	time.Sleep(100 * time.Millisecond) // let the watcher start

	// A burst of writes is one reload.
	for i := range 3 {
		writeFile(t, dir, "b.yaml", fmt.Sprintf(onePolicy, "b")+strings.Repeat("#\n", i))
	}
	if got := log.next(t); got != "policies reloaded: 3 policies from "+dir+", "+file {
		t.Fatalf("log = %q", got)
	}
	// A broken file keeps the old set.
	bad := writeFile(t, dir, "c.yml", "id: c\nversion: \"1\"\nevents: [e]\nwhen: nope\ndecision: deny\n")
	want := "policy reload failed, keeping 3 previous policies: " + bad + ":4: when: undeclared reference to 'nope' (at 1:1)"
	if got := log.next(t); got != want {
		t.Fatalf("log = %q\nwant  %q", got, want)
	}
	if e.Set().Len() != 3 {
		t.Fatal("set replaced by a broken one")
	}
	// Editors save by writing a new file and renaming it over the old one.
	tmp := writeFile(t, filepath.Dir(file), ".single.yaml.swp", fmt.Sprintf(onePolicy, "s")+"---\n"+fmt.Sprintf(onePolicy, "s2"))
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	if got := log.next(t); !strings.HasPrefix(got, "policies reloaded: 4 policies") {
		t.Fatalf("log = %q", got)
	}
	if e.Set().Get("s2") == nil {
		t.Fatal("renamed file not loaded")
	}
	// Files that are not policies do not trigger a reload.
	writeFile(t, dir, "notes.txt", "x")
	select {
	case line := <-log.ch:
		t.Fatalf("unexpected reload: %q", line)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v", err)
	}
}
