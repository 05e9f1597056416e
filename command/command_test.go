package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hook returns the absolute path of a test script in testdata/hooks.
func hook(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	big := append(append([]byte(`{"blob":"`), bytes.Repeat([]byte("a"), 2<<20)...), `"}`...)
	tests := []struct {
		name      string
		script    string
		payload   []byte
		timeout   time.Duration
		maxStderr int64
		wantPatch string // "" = nil patch
		wantErr   []string
		errIs     error
	}{
		{name: "patch depends on stdin", script: "patch.sh",
			payload: []byte(`{"event":"tool.pre_call","tool":{"name":"edit_file"}}`), wantPatch: `{"tool_input":{"seen":"edit_file"}}`},
		{name: "patch with other input", script: "patch.sh",
			payload: []byte(`{"tool":{"name":"bash"}}`), wantPatch: `{"tool_input":{"seen":"bash"}}`},
		{name: "empty stdout is empty patch", script: "empty.sh", payload: []byte(`{"x":1}`)},
		{name: "child not reading 2MB stdin", script: "noread.sh", payload: big, timeout: 5 * time.Second, wantPatch: `{}`},
		{name: "non-zero exit", script: "fail.sh", payload: []byte(`{}`),
			wantErr: []string{"exit status 1", "hook failed: cannot reach policy store"}},
		{name: "stderr excerpt is truncated to its tail", script: "fail.sh", payload: []byte(`{}`), maxStderr: 12,
			wantErr: []string{"exit status 1: …olicy store"}},
		{name: "stderr flood keeps tail", script: "stderrflood.sh", payload: []byte(`{}`), timeout: 10 * time.Second,
			wantErr: []string{"exit status 3: …", "the real error is at the end"}},
		{name: "not JSON", script: "notjson.sh", payload: []byte(`{}`), wantErr: []string{`stdout is not JSON: "hello"`}},
		{name: "stdout cap", script: "flood.sh", payload: []byte(`{}`), timeout: 10 * time.Second,
			wantErr: []string{"stdout exceeds 1048576 bytes"}, errIs: ErrStdoutTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(Config{Argv: []string{hook(t, tc.script)}, Timeout: tc.timeout, MaxStderr: tc.maxStderr})
			if err != nil {
				t.Fatal(err)
			}
			patch, err := h.Run(context.Background(), tc.payload)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want error containing %q, got patch %q", tc.wantErr, patch)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if len(err.Error()) > 9000 {
					t.Errorf("error message is %d bytes long", len(err.Error()))
				}
				if tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Errorf("errors.Is(%v, %v) = false", err, tc.errIs)
				}
				if patch != nil {
					t.Errorf("patch %q returned with error", patch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantPatch == "" {
				if patch != nil {
					t.Fatalf("want nil patch, got %q", patch)
				}
				return
			}
			if string(patch) != tc.wantPatch {
				t.Fatalf("patch = %q, want %q", patch, tc.wantPatch)
			}
		})
	}
}

func TestExitErrorFields(t *testing.T) {
	h, err := New(Config{Argv: []string{hook(t, "fail.sh")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Run(context.Background(), nil)
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want *ExitError, got %T %v", err, err)
	}
	if ee.Code != 1 || ee.Truncated || ee.Stderr != "hook failed: cannot reach policy store" {
		t.Fatalf("ExitError = %+v", ee)
	}
}

// alive reports whether pid exists and is not a zombie (an orphan killed
// with its group may linger as a zombie until init reaps it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	const timeout = time.Second
	h, err := New(Config{Argv: []string{hook(t, "hang.sh")}, Env: []string{"WARDEN_PIDFILE=" + pidfile}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	patch, err := h.Run(context.Background(), []byte(`{}`))
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("want timeout error, got patch %q", patch)
	}
	if err.Error() != "command timed out after 1s" {
		t.Errorf("error = %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) = false")
	}
	if elapsed < timeout || elapsed > timeout+time.Second {
		t.Errorf("Run took %s, want within [%s, %s]", elapsed, timeout, timeout+time.Second)
	}
	t.Logf("returned after %s", elapsed)

	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data))
	if len(fields) != 3 {
		t.Fatalf("pidfile = %q", data)
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pid %d survived the timeout", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestCallerContextCancel(t *testing.T) {
	h, err := New(Config{Argv: []string{hook(t, "hang.sh")}, Env: []string{"WARDEN_PIDFILE=" + filepath.Join(t.TempDir(), "pids")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = h.Run(ctx, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if d := time.Since(start); d > 1300*time.Millisecond {
		t.Errorf("Run took %s after a 300ms cancel", d)
	}
}

func TestBackgroundProcessHoldingStdout(t *testing.T) {
	// The hook exits at once but leaves a background process holding its
	// stdout: Run gives up after waitDelay, fails (the output may be
	// incomplete) and kills the leftover process with the group.
	h, err := New(Config{Argv: []string{"sh", "-c", `sleep 5 & echo "$!" >&2; echo '{}'`}, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = h.Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "kept its stdout or stderr open") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Run took %s", d)
	}
}

func TestFloodDoesNotAllocate(t *testing.T) {
	for _, script := range []string{"flood.sh", "stderrflood.sh"} {
		t.Run(script, func(t *testing.T) {
			h, err := New(Config{Argv: []string{hook(t, script)}, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = h.Run(context.Background(), []byte(`{}`))
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("want an error")
			}
			total := after.TotalAlloc - before.TotalAlloc
			heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("error: %.80s; TotalAlloc +%d B, HeapAlloc %+d B", err, total, heap)
			const limit = 16 << 20
			if total > limit || heap > limit {
				t.Errorf("allocated %d B total, heap grew %d B; limit %d", total, heap, limit)
			}
		})
	}
}

func TestEnvironmentAllowList(t *testing.T) {
	t.Setenv("WARDEN_TEST_SECRET", "s3cr3t")
	t.Setenv("LANG", "C.UTF-8")
	h, err := New(Config{Argv: []string{hook(t, "env.sh")}, Env: []string{"WARDEN_EXTRA=from-config"}})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := h.Run(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Names, Secret, Extra string }
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatalf("%v: %s", err, patch)
	}
	if got.Secret != "" || strings.Contains(string(patch), "s3cr3t") {
		t.Errorf("secret leaked to the child: %s", patch)
	}
	if got.Extra != "from-config" {
		t.Errorf("Config.Env entry not visible: %s", patch)
	}
	allowed := map[string]bool{"WARDEN_EXTRA": true, "PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for _, k := range envAllow {
		allowed[k] = true
	}
	names := strings.Fields(got.Names)
	for _, n := range names {
		if !allowed[n] {
			t.Errorf("child sees unexpected variable %s", n)
		}
	}
	if !strings.Contains(" "+got.Names+" ", " LANG ") {
		t.Errorf("allow-listed LANG not passed: %q", got.Names)
	}
}

func TestWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	h, err := New(Config{Argv: []string{"sh", "-c", `printf '"%s"' "$(pwd -P)"`}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := h.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if string(patch) != strconv.Quote(want) {
		t.Fatalf("patch = %s, want %q", patch, want)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "empty argv", cfg: Config{}, wantErr: "empty argv"},
		{name: "empty command", cfg: Config{Argv: []string{""}}, wantErr: "empty argv"},
		{name: "unknown command", cfg: Config{Argv: []string{"warden-no-such-hook-xyz"}}, wantErr: `"warden-no-such-hook-xyz"`},
		{name: "missing file", cfg: Config{Argv: []string{"./no/such/hook.sh"}}, wantErr: `"./no/such/hook.sh"`},
		{name: "not executable", cfg: Config{Argv: []string{"../go.mod"}}, wantErr: "permission denied"},
		{name: "bad env", cfg: Config{Argv: []string{"sh"}, Env: []string{"NOEQUALS"}}, wantErr: "not K=V"},
		{name: "negative timeout", cfg: Config{Argv: []string{"sh"}, Timeout: -1}, wantErr: "negative timeout"},
		{name: "negative cap", cfg: Config{Argv: []string{"sh"}, MaxStdout: -1}, wantErr: "negative output limit"},
		{name: "bare name via PATH", cfg: Config{Argv: []string{"sh"}}},
		{name: "relative path", cfg: Config{Argv: []string{"../testdata/hooks/patch.sh"}}},
		{name: "relative path against Dir", cfg: Config{Argv: []string{"./hooks/patch.sh"}, Dir: "../testdata"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New error = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !filepath.IsAbs(h.Path()) {
				t.Errorf("Path() = %q, not absolute", h.Path())
			}
		})
	}
}

func TestTailWriter(t *testing.T) {
	w := &tailWriter{max: 10}
	for i := 0; i < 100; i++ {
		_, _ = w.Write([]byte(strconv.Itoa(i % 10)))
	}
	_, _ = w.Write([]byte("abc"))
	got, truncated := w.excerpt()
	if got != "3456789abc" || !truncated {
		t.Fatalf("excerpt = %q, %v", got, truncated)
	}
	if cap(w.buf) > 64 {
		t.Errorf("buffer grew to %d", cap(w.buf))
	}
	w = &tailWriter{max: 4}
	_, _ = w.Write([]byte("0123456789"))
	if got, _ := w.excerpt(); got != "6789" {
		t.Fatalf("excerpt after big write = %q", got)
	}
}

func BenchmarkRun(b *testing.B) {
	payload := []byte(`{"event":"tool.pre_call","tool":{"name":"edit_file"}}`)
	for _, bc := range []struct{ name, path string }{
		{"script-echo-{}", hook(b, "noread.sh")},
		{"bin-true", "/bin/true"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := New(Config{Argv: []string{bc.path}, Timeout: 5 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Run(context.Background(), payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
