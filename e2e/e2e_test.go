// Package e2e holds whole-binary tests: they build cmd/warden, run it as a user would
// and check what the contract promises across process boundaries.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
	binPath   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// wardenBinary builds cmd/warden once per test binary and returns its path;
// WARDEN_E2E_BIN names a prebuilt binary to test instead.
func wardenBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("WARDEN_E2E_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "warden-e2e-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "warden")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/wardenhq/warden/cmd/warden")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// output collects a process's stdout and stderr and reports its listening URL.
type output struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	found bool
	url   chan string
}

var listeningRE = regexp.MustCompile(`warden listening on (https?://\S+)`)

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if !o.found {
		if m := listeningRE.FindSubmatch(o.buf.Bytes()); m != nil {
			o.found = true
			o.url <- string(m[1])
		}
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	const max = 4000
	s := o.buf.String()
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}

// server is a running `warden serve`.
type server struct {
	cmd  *exec.Cmd
	out  *output
	url  string
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's result, valid after done
}

// startServer runs `warden serve` on a free loopback port and waits for its
// listening line. The process is killed at the end of the test whatever happens.
func startServer(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	out := &output{url: make(chan string, 1)}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start warden serve: %v", err)
	}
	s := &server{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.url = <-out.url:
	case <-s.done:
		t.Fatalf("warden serve exited before listening (%v); output:\n%s", s.err, out)
	case <-time.After(20 * time.Second):
		t.Fatalf("warden serve printed no listening line within 20s; output:\n%s", out)
	}
	return s
}

// wait waits for the process to exit and returns cmd.Wait's error.
func (s *server) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(timeout):
		t.Fatalf("warden serve still running %v after the signal; output:\n%s", timeout, s.out)
		return nil
	}
}
