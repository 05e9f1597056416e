package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/auth"
)

// browserEnv runs the console's browser tests: Debian's chromium driven by
// playwright-core (e2e/node), with the npm peers. WARDEN_UI_SCREENSHOTS, set
// to a directory, saves a screenshot of each page there (docs/ui).
const browserEnv = "WARDEN_E2E_BROWSER"

// chromiumPath is the browser the tests drive.
const chromiumPath = "/usr/bin/chromium"

// browserGroup skips unless WARDEN_E2E_BROWSER is set, and fails when it is
// set but chromium, node or the npm packages are missing. It returns the
// absolute path of e2e/node.
func browserGroup(t *testing.T) string {
	t.Helper()
	if os.Getenv(browserEnv) == "" {
		t.Skip(browserEnv + " not set: the console's browser tests need chromium and playwright-core (.ci/run sets it)")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s is set but %s is missing (apt-get install chromium): %v", browserEnv, chromiumPath, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("%s is set but node is not on PATH: %v", browserEnv, err)
	}
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{"playwright-core"}, nodePackages...) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			t.Fatalf("%s is set but npm package %s is missing (run: npm ci --prefix e2e/node): %v", browserEnv, p, err)
		}
	}
	return dir
}

// consoleServer starts server-everything and `warden serve` in front of it
// with four tokens (ops: read and approve; viewer: read; auditor: read and
// unseal; agent: decide), the policies of mcp.yaml and console.yaml,
// sealed originals under a KEK of the test's own (outside the data
// directory), and extra config; it returns the server and the tokens.
func consoleServer(t *testing.T, nodeDir, extra string) (*server, map[string]string) {
	t.Helper()
	upstream := serverEverything(t, nodeDir)
	tokens := map[string]string{}
	var conf strings.Builder
	fmt.Fprintf(&conf, "mcp:\n  servers:\n    everything: {url: %q}\nauth:\n  tokens:\n", upstream)
	for _, e := range []struct{ name, scopes string }{{"ops", "read, approve"}, {"viewer", "read"}, {"auditor", "read, unseal"}, {"agent", "decide"}} {
		tok, sum, err := auth.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[e.name] = tok
		fmt.Fprintf(&conf, "    - {name: %s, sha256: %q, scopes: [%s]}\n", e.name, sum, e.scopes)
	}
	dir := t.TempDir()
	fmt.Fprintf(&conf, "trace: {seal: {kek_file: %q}}\n", filepath.Join(dir, "seal.kek"))
	conf.WriteString(extra)
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"),
		"--policy", filepath.Join(nodeDir, "policies/mcp.yaml"), "--policy", filepath.Join(nodeDir, "policies/console.yaml"))
	return srv, tokens
}

func browserArgs(srv *server, tokens map[string]string, mode string) []string {
	a := []string{"--url", srv.url, "--ops", tokens["ops"], "--viewer", tokens["viewer"], "--agent", tokens["agent"],
		"--chromium", chromiumPath, "--mode", mode}
	if dir := os.Getenv("WARDEN_UI_SCREENSHOTS"); dir != "" && mode == "console" {
		a = append(a, "--shots", dir)
	}
	return a
}

// TestConsoleBrowser is issue 9's console acceptance in real Chromium:
// sign-in, every page with seeded decisions (rows, filters, a decision's
// results, a session's timeline, the policies, the overview's charts), and
// held MCP calls of the official SDK client through /mcp/everything to
// server-everything, decided from the approvals page: the approved call
// gets the tool's real result, the denied one a JSON-RPC error naming the
// denial, the second arriving live; a read-only viewer cannot approve.
func TestConsoleBrowser(t *testing.T) {
	nodeDir := browserGroup(t)
	srv, tokens := consoleServer(t, nodeDir, "")
	runScript(t, nodeDir, 3*time.Minute, "console_browser.mjs", browserArgs(srv, tokens, "console")...)
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}

// TestConsoleApprovalTimeout: with approvals.wait 2s, a held MCP call that
// nobody decides is refused with approval_timeout, and the console lists
// its approval as expired.
func TestConsoleApprovalTimeout(t *testing.T) {
	nodeDir := browserGroup(t)
	srv, tokens := consoleServer(t, nodeDir, "approvals: {wait: 2s}\n")
	runScript(t, nodeDir, 2*time.Minute, "console_browser.mjs", browserArgs(srv, tokens, "timeout")...)
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}

// TestConsoleSealedOriginals is issue 28's console acceptance in real
// Chromium (console_sealed.mjs): an approver with approve sees the real
// recipient of an ask on the approval's page (and the queue, live too, and
// the asking decision), a read token sees only the redaction on every
// page, the modify diff shows an unseal viewer the original and the
// modified value, and the unseals are listed (who, which record, from
// where, via).
func TestConsoleSealedOriginals(t *testing.T) {
	nodeDir := browserGroup(t)
	srv, tokens := consoleServer(t, nodeDir, "")
	a := []string{"--url", srv.url, "--ops", tokens["ops"], "--viewer", tokens["viewer"], "--auditor", tokens["auditor"],
		"--agent", tokens["agent"], "--chromium", chromiumPath}
	if dir := os.Getenv("WARDEN_UI_SCREENSHOTS"); dir != "" {
		a = append(a, "--shots", dir)
	}
	runScript(t, nodeDir, 2*time.Minute, "console_sealed.mjs", a...)
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}
