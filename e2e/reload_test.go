package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const reloadRequest = `{"jsonrpc":"2.0","id":"r1","method":"steps/toolCallRequest","params":{
 "toolCallRequest":{"executionId":"e1","toolId":"deploy","inputs":[{"name":"env","value":"prod"}]},
 "context":{"session":{"id":"reload"}}}}`

func policyDoc(decision string) string {
	return "id: gate-deploys\nversion: \"1\"\nevents: [\"steps/toolCallRequest\"]\n" +
		"when: 'tool.name == \"deploy\"'\ndecision: " + decision + "\nreason: deploys are gated\n"
}

// decisionOf posts the request and returns the decision it got.
func decisionOf(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/aos", "application/json", strings.NewReader(reloadRequest))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"allow", "deny", "modify"} {
		if strings.Contains(string(body), `"decision":"`+d+`"`) {
			return d
		}
	}
	t.Fatalf("no decision in %s", body)
	return ""
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHotReload: a policy edit takes effect without a restart (file watch),
// a broken edit keeps the previous policies and says why, and SIGHUP
// reloads on demand.
func TestHotReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary")
	}
	bin := wardenBinary(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policies")
	if err := os.Mkdir(pol, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(pol, "gate.yaml")
	write := func(s string) {
		t.Helper()
		// Write-and-rename, as editors do.
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write(policyDoc("allow"))
	s := startServer(t, bin, "--data", filepath.Join(dir, "data"), "--policy", pol)
	if got := decisionOf(t, s.url); got != "allow" {
		t.Fatalf("before the edit: %s", got)
	}

	write(policyDoc("deny"))
	eventually(t, 5*time.Second, "file change reloads the policy", func() bool { return decisionOf(t, s.url) == "deny" })

	// A broken edit: the old (deny) set stays, and the log names file:line.
	write(policyDoc("deny") + "when: 'tool.name =='\n")
	eventually(t, 5*time.Second, "broken edit is reported", func() bool {
		return strings.Contains(s.out.String(), "gate.yaml:") && strings.Contains(s.out.String(), "keeping")
	})
	if got := decisionOf(t, s.url); got != "deny" {
		t.Fatalf("after a broken edit the previous policies must stay: %s\n%s", got, s.out)
	}

	// SIGHUP reloads on demand (the watcher may also have fired: either way
	// the server serves the fixed file and says it reloaded).
	write(policyDoc("allow"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "SIGHUP reload", func() bool {
		return decisionOf(t, s.url) == "allow" && strings.Contains(s.out.String(), `msg="policies reloaded"`) && strings.Contains(s.out.String(), "signal=SIGHUP")
	})
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t, 10*time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.out)
	}
}
