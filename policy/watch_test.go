package policy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden"
)

const onePolicy = "id: %s\nversion: \"1\"\nevents: [e]\ndecision: allow\n"

// logLine is one record logged by Reload or Watch: "LEVEL msg k=v ...".
type logSink struct {
	mu    sync.Mutex
	lines []string
	ch    chan string
}

func newLogSink() *logSink { return &logSink{ch: make(chan string, 64)} }

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logSink) WithGroup(string) slog.Handler            { return l }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	l.ch <- b.String()
	return nil
}

func (l *logSink) logger() *slog.Logger { return slog.New(l) }

// next returns the next line logged, failing after 5s.
func (l *logSink) next(t *testing.T) string {
	t.Helper()
	select {
	case line := <-l.ch:
		return line
	case <-time.After(5 * time.Second):
		t.Fatal("nothing logged within 5s")
		return ""
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", fmt.Sprintf(onePolicy, "a"))
	s, err := LoadSet(Spec{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	log := newLogSink()
	writeFile(t, dir, "b.yaml", fmt.Sprintf(onePolicy, "b"))
	if err := e.Reload(log.logger()); err != nil || e.Set().Len() != 2 {
		t.Fatalf("Reload = %v, %d policies", err, e.Set().Len())
	}
	if got := log.next(t); !strings.HasPrefix(got, "INFO policies reloaded policies=2 added=[b] changed=[] removed=0 ") {
		t.Fatalf("log = %q", got)
	}
	bad := writeFile(t, dir, "c.yaml", "id: c\nversion: \"1\"\nevents: [e]\ndecision: nope\n")
	err = e.Reload(log.logger())
	if err == nil || err.Error() != bad+`:4: unknown decision "nope" (want allow, deny, modify or ask)` {
		t.Fatalf("Reload bad = %v", err)
	}
	if got := log.next(t); !strings.HasPrefix(got, "WARN policy reload failed, keeping the previous policies policies=2 ") ||
		!strings.Contains(got, bad+":4:") {
		t.Fatalf("log = %q", got)
	}
	if e.Set().Len() != 2 {
		t.Fatal("failed reload replaced the set")
	}
	// Removing a policy succeeds, with a warning naming it; a change is INFO.
	os.Remove(bad)
	writeFile(t, dir, "a.yaml", "id: a\nversion: \"2\"\nevents: [e]\ndecision: allow\n")
	os.Remove(filepath.Join(dir, "b.yaml"))
	if err := e.Reload(log.logger()); err != nil || e.Set().Len() != 1 {
		t.Fatalf("Reload = %v, %d policies", err, e.Set().Len())
	}
	if got := log.next(t); !strings.HasPrefix(got, "WARN policy reload removed policies removed=[b] policies=1 ") {
		t.Fatalf("log = %q", got)
	}
	if got := log.next(t); !strings.HasPrefix(got, "INFO policies reloaded policies=1 added=[] changed=[a] removed=1 ") {
		t.Fatalf("log = %q", got)
	}
	// The built-in pack plus paths reloads as the same combination.
	s, err = LoadSet(Spec{Builtin: true, Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	e = NewEngine(s, Options{})
	if err := e.Reload(nil); err != nil || e.Set().Get("deny-secrets-in-tool-calls") == nil || e.Set().Get("a") == nil {
		t.Fatalf("Reload = %v: want the built-in pack and a", err)
	}
}

// TestReloadKeepsPoliciesOnTruncatedFile is the attack of issue 7: an editor's
// non-atomic save first truncates the file (`: > policies/10-secrets.yaml`).
// The reload that sees the empty file must keep the previous set, so the
// secret-bearing calls of the next second are still denied, and say so at
// WARN.
func TestReloadKeepsPoliciesOnTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	pack, err := BuiltinFS().ReadFile("pack/10-secrets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	secrets := writeFile(t, dir, "10-secrets.yaml", string(pack))
	writeFile(t, dir, "20-other.yaml", fmt.Sprintf(onePolicy, "other"))
	s, err := LoadSet(Spec{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	call := toolCall("http_post", map[string]any{"body": "aws_access_key_id=AKIAIOSFODNN7EXAMPLE"})
	decide := func() warden.Verdict {
		d, err := e.Decide(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		return d.Verdict
	}
	if v := decide(); v != warden.Deny {
		t.Fatalf("before: %v, want deny", v)
	}
	rev := e.Set().Revision()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := newLogSink()
	done := make(chan error, 1)
	go func() { done <- e.Watch(ctx, log.logger()) }()
	time.Sleep(100 * time.Millisecond) // let the watcher start

	for _, content := range []string{"", "  \n", "# being rewritten\n"} {
		if err := os.WriteFile(secrets, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got := log.next(t)
		want := fmt.Sprintf("WARN policy reload failed, keeping the previous policies policies=%d revision=%s", len(s.Policies()), rev[:12])
		if !strings.HasPrefix(got, want) || !strings.Contains(got, secrets+":1: no policy in this file") {
			t.Fatalf("content %q: log = %q\nwant %q... naming %s:1", content, got, want, secrets)
		}
		if v := decide(); v != warden.Deny || e.Set().Revision() != rev {
			t.Fatalf("content %q: after the truncated save: %v (revision %s), want deny on the old set", content, v, e.Set().Revision())
		}
	}
	// The save completes: the file is whole again and the set reloads.
	if err := os.WriteFile(secrets, pack, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := log.next(t); !strings.HasPrefix(got, fmt.Sprintf("INFO policies reloaded policies=%d added=[] changed=[] removed=0 revision=%s", len(s.Policies()), rev[:12])) {
		t.Fatalf("log = %q", got)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v", err)
	}
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "single.yaml") // a file outside dir
	writeFile(t, dir, "a.yaml", fmt.Sprintf(onePolicy, "a"))
	writeFile(t, filepath.Dir(file), "single.yaml", fmt.Sprintf(onePolicy, "s"))
	spec := Spec{Paths: []string{dir, file}}
	s, err := LoadSet(spec)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	log := newLogSink()
	done := make(chan error, 1)
	go func() { done <- e.Watch(ctx, log.logger()) }()
	time.Sleep(100 * time.Millisecond) // let the watcher start

	// A burst of writes is one reload.
	for i := range 3 {
		writeFile(t, dir, "b.yaml", fmt.Sprintf(onePolicy, "b")+strings.Repeat("#\n", i))
	}
	if got := log.next(t); !strings.HasPrefix(got, "INFO policies reloaded policies=3 added=[b]") || !strings.HasSuffix(got, "from="+dir+", "+file) {
		t.Fatalf("log = %q", got)
	}
	// A broken file keeps the old set.
	bad := writeFile(t, dir, "c.yml", "id: c\nversion: \"1\"\nevents: [e]\nwhen: nope\ndecision: deny\n")
	want := "err=" + bad + ":4: when: undeclared reference to 'nope' (at 1:1)"
	if got := log.next(t); !strings.HasPrefix(got, "WARN policy reload failed, keeping the previous policies policies=3 ") || !strings.HasSuffix(got, want) {
		t.Fatalf("log = %q\nwant  ...%q", got, want)
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
	if got := log.next(t); !strings.HasPrefix(got, "INFO policies reloaded policies=4") {
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

// TestReloadStatus: the engine says when its set was loaded and how the
// last reload went (the console's policies page).
func TestReloadStatus(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", fmt.Sprintf(onePolicy, "a"))
	s, err := LoadSet(Spec{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(s, Options{})
	st := e.Status()
	if st.Loaded.IsZero() || !st.Reloaded.IsZero() || st.Err != nil {
		t.Fatalf("at start: %+v", st)
	}
	bad := writeFile(t, dir, "c.yaml", "id: c\nversion: \"1\"\nevents: [e]\ndecision: nope\n")
	_ = e.Reload(nil)
	failed := e.Status()
	if failed.Err == nil || !strings.Contains(failed.Err.Error(), bad+":4:") || failed.Reloaded.IsZero() || !failed.Loaded.Equal(st.Loaded) {
		t.Fatalf("after a failed reload: %+v", failed)
	}
	os.Remove(bad)
	if err := e.Reload(nil); err != nil {
		t.Fatal(err)
	}
	ok := e.Status()
	if ok.Err != nil || ok.Loaded.Before(failed.Reloaded) || ok.Reloaded.Before(failed.Reloaded) {
		t.Fatalf("after a good reload: %+v", ok)
	}
}
