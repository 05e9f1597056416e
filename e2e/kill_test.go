package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

const (
	workers  = 16
	loadTime = 2 * time.Second
)

// TestTraceSurvivesKill9 checks CONTRACT §8: a decision whose answer has been sent is
// in the trace even if the process is killed right after.
func TestTraceSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds and runs the warden binary; skipped with -short")
	}
	bin := wardenBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, "--data", data)

	l := startLoad(t, srv.url+"/aos", workers, "kill9")
	time.Sleep(loadTime)
	inflight := l.signal()
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	_ = srv.wait(t, 10*time.Second) // "signal: killed" is the expected error
	l.halt()
	t.Logf("%d in flight at SIGKILL; %s", inflight, l.summary())
	if len(l.answers) == 0 {
		t.Fatalf("no request was answered before the kill (first failure: %s); server output:\n%s", l.firstBad, srv.out)
	}

	checkTrace(t, readTrace(t, bin, data, "kill9"), l.answers, "kill9")
	if t.Failed() {
		t.Logf("server output:\n%s", srv.out)
	}
	// The hash chain holds over everything that was committed (issue 10),
	// and goes on from the last committed record after a restart.
	n := verifyTrace(t, bin, data, len(l.answers))
	srv = startServer(t, bin, "--data", data)
	l = startLoad(t, srv.url+"/aos", workers, "after")
	time.Sleep(loadTime / 4)
	l.signal()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	_ = srv.wait(t, 15*time.Second)
	l.halt()
	verifyTrace(t, bin, data, n+len(l.answers))
}

// verifyTrace runs `warden verify` on dir and checks that the chain holds
// over at least min records; it returns how many it verified.
func verifyTrace(t *testing.T, bin, dir string, min int) int {
	t.Helper()
	cmd := exec.Command(bin, "verify", "--data", dir, "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var rep struct {
		OK       bool `json:"ok"`
		Verified int  `json:"verified"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); err != nil || jerr != nil || !rep.OK || rep.Verified < min {
		t.Fatalf("warden verify: %v %v: want ok over at least %d records, got:\n%s%s", err, jerr, min, stdout.String(), stderr.String())
	}
	t.Logf("warden verify: %d records verified", rep.Verified)
	return rep.Verified
}

// TestGracefulShutdownUnderLoad checks CONTRACT §2: SIGTERM stops accepting, finishes
// in-flight requests, flushes the trace and exits 0; nothing answered is lost.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds and runs the warden binary; skipped with -short")
	}
	bin := wardenBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, "--data", data)

	l := startLoad(t, srv.url+"/aos", workers, "term")
	time.Sleep(loadTime)
	inflight := l.signal()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	err := srv.wait(t, 15*time.Second)
	l.halt()
	// Requests the client had started may still fail: one written to a keep-alive
	// connection the server closed as idle after SIGTERM is not retried (POST).
	t.Logf("%d in flight at SIGTERM; %s", inflight, l.summary())
	if err != nil {
		t.Errorf("warden serve after SIGTERM: %v (want exit status 0); output:\n%s", err, srv.out)
	}
	if len(l.answers) == 0 {
		t.Fatalf("no request was answered (first failure: %s); server output:\n%s", l.firstBad, srv.out)
	}

	checkTrace(t, readTrace(t, bin, data, "term"), l.answers, "term")
	if t.Failed() {
		t.Logf("server output:\n%s", srv.out)
	}
}
