// Package command runs a hook as a subprocess: the hook payload (JSON) goes
// to the child's stdin and the child's stdout is the patch (JSON), as in
// docs/hooks.md and the AGH hook model. Empty stdout means an empty patch.
//
// The child runs with a minimal environment (an allow-list of warden's own
// variables plus the configured extra entries), in its own process group
// that is killed as a whole when the context ends or the timeout expires,
// and with bounded memory: stdout is capped (the child is killed when it
// prints more) and only a bounded excerpt of stderr is kept. This package
// never logs; stderr only ever appears, truncated, inside returned errors.
package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	// DefaultMaxStdout is the stdout cap used when Config.MaxStdout is 0.
	DefaultMaxStdout int64 = 1 << 20
	// DefaultMaxStderr is the stderr excerpt size used when Config.MaxStderr is 0.
	DefaultMaxStderr int64 = 8 << 10
	// DefaultMaxProcs is the process limit used when Config.MaxProcs is 0.
	DefaultMaxProcs = 8

	// waitDelay bounds how long Run waits for the child's pipes to close
	// after the child exited or was killed (e.g. a process that escaped the
	// process group still holds them); then the pipes are closed for it.
	waitDelay = 200 * time.Millisecond

	// excerptLen is how much of a non-JSON stdout an error quotes.
	excerptLen = 64
)

// envAllow lists the variables of warden's own environment that a child
// inherits (when set). Everything else, secrets included, is withheld.
var envAllow = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// ErrStdoutTooLarge is matched (errors.Is) by the error Run returns when the
// child printed more than Config.MaxStdout bytes; the child was killed.
var ErrStdoutTooLarge = errors.New("stdout too large")

// Config describes one command hook.
type Config struct {
	// Argv is the command and its arguments; no shell is involved.
	// Argv[0] is resolved at New: a bare name through PATH, a relative
	// path (containing a slash) against Dir when set, else against the
	// current directory.
	Argv []string
	// Env holds extra "K=V" entries for the child, already expanded by the
	// config loader. They are added after (and override) the allow-listed
	// variables inherited from warden: PATH, HOME, LANG, LC_ALL, TZ, TMPDIR.
	Env []string
	// Dir is the child's working directory; "" inherits warden's.
	Dir string
	// Timeout bounds one Run; 0 means no timeout of its own (the caller's
	// context still applies).
	Timeout time.Duration
	// MaxStdout caps the patch size in bytes (default DefaultMaxStdout).
	// A child printing more is killed and Run fails; at most this much
	// stdout is ever buffered.
	MaxStdout int64
	// MaxStderr is how many bytes of stderr are kept for error messages
	// (default DefaultMaxStderr). The TAIL is kept — the last lines usually
	// carry the actual error; the rest is read and discarded so a chatty
	// child never blocks on a full pipe.
	MaxStderr int64
	// MaxProcs bounds the processes of this hook running at once (default
	// DefaultMaxProcs). A Run past it waits for a slot within its timeout
	// and context; if none frees in time it fails (ErrBusy) without
	// starting a process.
	MaxProcs int
}

// ErrBusy is matched (errors.Is) by the error Run returns when no process
// slot freed within the timeout; it also matches context.DeadlineExceeded
// or context.Canceled, whichever ended the wait.
var ErrBusy = errors.New("all process slots busy")

// Handler runs one configured command hook. It is safe for concurrent use;
// every Run starts a fresh process.
type Handler struct {
	path      string
	args      []string
	env       []string
	dir       string
	timeout   time.Duration
	maxStdout int64
	maxStderr int64
	slots     chan struct{} // one token per running process
}

// New validates c and resolves the command. It fails on an empty Argv, a
// command that cannot be found or is not executable (the error names it),
// malformed Env entries, or negative limits.
func New(c Config) (*Handler, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, errors.New("command: empty argv")
	}
	name := c.Argv[0]
	lookup := name
	if strings.ContainsRune(name, filepath.Separator) && !filepath.IsAbs(name) && c.Dir != "" {
		lookup = filepath.Join(c.Dir, name)
	}
	path, err := exec.LookPath(lookup)
	if err != nil {
		if errors.Is(err, exec.ErrDot) {
			return nil, fmt.Errorf("command %q: resolves to a file in the current directory through a relative PATH entry; use an explicit path", name)
		}
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, fmt.Errorf("command %q: %w", name, err)
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return nil, fmt.Errorf("command %q: %w", name, err)
		}
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("command %q: env entry %q is not K=V", name, envName(kv))
		}
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("command %q: negative timeout %s", name, c.Timeout)
	}
	if c.MaxStdout < 0 || c.MaxStderr < 0 {
		return nil, fmt.Errorf("command %q: negative output limit", name)
	}
	if c.MaxProcs < 0 {
		return nil, fmt.Errorf("command %q: negative process limit", name)
	}
	if c.MaxProcs == 0 {
		c.MaxProcs = DefaultMaxProcs
	}
	h := &Handler{
		path:      path,
		args:      append([]string(nil), c.Argv[1:]...),
		env:       append([]string(nil), c.Env...),
		dir:       c.Dir,
		timeout:   c.Timeout,
		maxStdout: c.MaxStdout,
		maxStderr: c.MaxStderr,
		slots:     make(chan struct{}, c.MaxProcs),
	}
	if h.maxStdout == 0 {
		h.maxStdout = DefaultMaxStdout
	}
	if h.maxStderr == 0 {
		h.maxStderr = DefaultMaxStderr
	}
	return h, nil
}

// envName returns the part of a malformed env entry that is safe to show
// (a value could be a secret): at most its first 32 bytes.
func envName(kv string) string {
	if len(kv) > 32 {
		return kv[:32] + "…"
	}
	return kv
}

// Path returns the resolved absolute path of the command.
func (h *Handler) Path() string { return h.path }

// stdoutCapError is returned when stdout exceeded the cap.
type stdoutCapError struct{ max int64 }

func (e *stdoutCapError) Error() string {
	return fmt.Sprintf("stdout exceeds %d bytes; command killed", e.max)
}
func (e *stdoutCapError) Is(target error) bool { return target == ErrStdoutTooLarge }

// timeoutError is returned when the handler's own Timeout expired.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("command timed out after %s", e.d) }
func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// busyError is returned when no process slot freed before the deadline.
type busyError struct {
	n     int
	cause error
}

func (e *busyError) Error() string {
	return fmt.Sprintf("%d processes of this hook already running (limits.hook_procs); none finished in time: %v", e.n, e.cause)
}
func (e *busyError) Is(target error) bool { return target == ErrBusy }
func (e *busyError) Unwrap() error        { return e.cause }

// ExitError is returned by Run when the command exited unsuccessfully.
type ExitError struct {
	// Code is the exit status, or -1 when the process died from a signal.
	Code int
	// Signal names the signal that killed the process, if any.
	Signal string
	// Stderr is the kept tail of stderr (at most MaxStderr bytes, valid
	// UTF-8, trimmed); it may contain whatever the hook printed.
	Stderr string
	// Truncated reports that stderr was longer than what Stderr holds.
	Truncated bool
}

// Error renders "exit status N: <stderr excerpt>".
func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Signal != "" {
		b.WriteString("terminated by signal " + e.Signal)
	} else {
		fmt.Fprintf(&b, "exit status %d", e.Code)
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		if e.Truncated {
			b.WriteString("…")
		}
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Run starts the command, writes payload to its stdin and returns the
// trimmed stdout as the patch; empty stdout returns nil, nil. Stdout must
// be valid JSON. Run fails — always within the timeout plus a fraction of
// a second — when the command times out (the error matches
// context.DeadlineExceeded), the context ends, the command exits non-zero
// (*ExitError), prints more than MaxStdout bytes (ErrStdoutTooLarge) or
// prints something that is not JSON. On every path the command's whole
// process group is killed before Run returns.
func (h *Handler) Run(ctx context.Context, payload []byte) ([]byte, error) {
	base := ctx
	if h.timeout > 0 {
		var stop context.CancelFunc
		base, stop = context.WithTimeoutCause(ctx, h.timeout, &timeoutError{h.timeout})
		defer stop()
	}
	// At most cap(slots) processes at once: wait for a slot within the
	// same deadline as the run itself.
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
		case <-base.Done():
			return nil, &busyError{n: cap(h.slots), cause: context.Cause(base)}
		}
	}
	runCtx, cancel := context.WithCancelCause(base)
	defer cancel(nil)

	stdout := &capWriter{max: h.maxStdout, onOverflow: func() { cancel(ErrStdoutTooLarge) }}
	stderr := &tailWriter{max: h.maxStderr}

	cmd := exec.CommandContext(runCtx, h.path, h.args...)
	cmd.Dir = h.dir
	cmd.Env = h.environ()
	// exec copies the payload in its own goroutine, ignores EPIPE from a
	// child that does not read stdin, and gives up after WaitDelay.
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay

	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(h.path), err)
	}
	waitErr := cmd.Wait()
	// Background processes the hook left behind (same process group) do
	// not outlive the call. The group id is the leader's pid, which the
	// kernel does not reuse while the group has members.
	_ = killGroup(cmd)

	if stdout.overflowed() {
		return nil, &stdoutCapError{h.maxStdout}
	}
	if waitErr != nil && runCtx.Err() != nil {
		cause := context.Cause(runCtx)
		var te *timeoutError
		if errors.As(cause, &te) {
			return nil, cause
		}
		return nil, fmt.Errorf("command canceled: %w", cause)
	}
	if waitErr != nil {
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			out, truncated := stderr.excerpt()
			e := &ExitError{Code: ee.ExitCode(), Stderr: out, Truncated: truncated}
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				e.Signal = ws.Signal().String()
			}
			return nil, e
		}
		if errors.Is(waitErr, exec.ErrWaitDelay) {
			return nil, errors.New("command exited but a process it started kept its stdout or stderr open")
		}
		return nil, waitErr
	}

	out := bytes.TrimSpace(stdout.buf.Bytes())
	if len(out) == 0 {
		return nil, nil
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("stdout is not JSON: %s", excerpt(out))
	}
	return bytes.Clone(out), nil
}

// environ builds the child's environment: the allow-listed variables of
// ours that are set, then the configured entries. Never nil (a nil Env
// would make exec inherit everything).
func (h *Handler) environ() []string {
	env := make([]string, 0, len(envAllow)+len(h.env))
	for _, k := range envAllow {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, h.env...)
}

// killGroup SIGKILLs the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
}

// excerpt quotes at most excerptLen bytes of b for an error message.
func excerpt(b []byte) string {
	if len(b) <= excerptLen {
		return fmt.Sprintf("%q", b)
	}
	cut := excerptLen
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", b[:cut], len(b))
}

// capWriter buffers up to max bytes. A write that would exceed max is
// refused (exec then closes the pipe) and onOverflow is called once.
type capWriter struct {
	max        int64
	onOverflow func()

	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return 0, ErrStdoutTooLarge
	}
	if int64(w.buf.Len())+int64(len(p)) > w.max {
		w.over = true
		w.onOverflow()
		return 0, ErrStdoutTooLarge
	}
	return w.buf.Write(p)
}

func (w *capWriter) overflowed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over
}

// tailWriter keeps the last max bytes written and discards the rest; it
// never fails, so the pipe keeps being drained. It holds at most 2*max
// bytes plus one write.
type tailWriter struct {
	max int64

	mu    sync.Mutex
	buf   []byte
	total int64
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += int64(len(p))
	if int64(len(p)) >= w.max {
		w.buf = append(w.buf[:0], p[int64(len(p))-w.max:]...)
		return len(p), nil
	}
	if int64(len(w.buf)+len(p)) > 2*w.max {
		keep := w.max - int64(len(p))
		w.buf = append(w.buf[:0], w.buf[int64(len(w.buf))-keep:]...)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// excerpt returns the kept tail (trimmed, valid UTF-8) and whether stderr
// was longer than that.
func (w *tailWriter) excerpt() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf
	if int64(len(b)) > w.max {
		b = b[int64(len(b))-w.max:]
	}
	truncated := w.total > int64(len(b))
	// Drop a rune cut in half at the start of the tail.
	if truncated {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	s := strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD")
	return s, truncated
}
