package mcpgate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wardenhq/warden/internal/buftest"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binaries builds warden and the test MCP server once per test run.
func binaries(t *testing.T) (warden, server string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the warden binary; skipped with -short")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcpgate-bin")
		if buildErr != nil {
			return
		}
		for _, b := range [][2]string{{"warden", "./cmd/warden"}, {"mcpserver", "./mcpgate/testdata/mcpserver/cmd"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, b[0]), b[1])
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = &buildError{b[1], string(out)}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "warden"), filepath.Join(buildDir, "mcpserver")
}

type buildError struct{ pkg, out string }

func (e *buildError) Error() string { return "go build " + e.pkg + ": " + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// TestStdioBinary runs `warden mcp stdio -- mcpserver` with the go-sdk's
// CommandTransport: a session that ends normally, then one whose server
// crashes; both share one --data.
func TestStdioBinary(t *testing.T) {
	wardenBin, serverBin := binaries(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connect := func(stderr *buftest.Buffer) *mcp.ClientSession {
		cmd := exec.Command(wardenBin, "mcp", "stdio", "--policy", "testdata/policies", "--data", data, "--name", "tests", "--", serverBin)
		cmd.Stderr = stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
		if err != nil {
			t.Fatalf("connect: %v (stderr: %s)", err, stderr)
		}
		return cs
	}

	var stderr1 buftest.Buffer
	cs := connect(&stderr1)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := strings.Join(toolNames(tools), ","); strings.Contains(names, "secret_tool") || !strings.Contains(names, "echo") {
		t.Fatalf("tools = %s", names)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via binary"}})
	if err != nil || textOf(t, r) != "echo: via binary" {
		t.Fatalf("echo: %v %+v", err, r)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wire_money"}); err == nil || !strings.Contains(err.Error(), "denied by warden") {
		t.Fatalf("wire_money: %v, want a denial", err)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("normal end: %v (stderr: %s)", err, stderr1.String())
	}
	if !strings.Contains(stderr1.String(), "mcpserver: started") {
		t.Fatalf("the server's stderr was not passed through: %q", stderr1.String())
	}

	var stderr2 buftest.Buffer
	cs = connect(&stderr2)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash"})
	if err == nil || !strings.Contains(err.Error(), "MCP server exited before answering") {
		t.Fatalf("crash: %v, want the CodeUpstream error", err)
	}
	closeErr := cs.Close()
	if closeErr == nil || !strings.Contains(stderr2.String(), "stopped unexpectedly") {
		t.Fatalf("after a crash: close %v, stderr %q; want exit 1 and a clear error", closeErr, stderr2.String())
	}

	out, err := exec.Command(wardenBin, "runs", "--data", data, "-o", "json", "--last", "1000").Output()
	if err != nil {
		t.Fatalf("warden runs: %v", err)
	}
	var recs []struct {
		Surface, Direction, Decision string
		SessionID                    string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatalf("runs output: %v: %.300s", err, out)
	}
	sessions := map[string]bool{}
	denies := 0
	for _, r := range recs {
		if r.Surface != "mcp" || (r.Direction != "outbound" && r.Direction != "inbound") {
			t.Fatalf("record %+v", r)
		}
		sessions[r.SessionID] = true
		if r.Decision == "deny" {
			denies++
		}
	}
	if len(sessions) != 2 || denies != 1 {
		t.Fatalf("%d records, sessions %v, %d denies; want 2 sessions and 1 deny", len(recs), sessions, denies)
	}
}

// TestStdioStopsStubbornServers checks the stop sequence: a server that
// ignores the end of its input gets SIGTERM; one that ignores SIGTERM too
// gets SIGKILL.
func TestStdioStopsStubbornServers(t *testing.T) {
	wardenBin, _ := binaries(t)
	cases := []struct {
		name string
		argv []string
		max  time.Duration
	}{
		{"ignores EOF", []string{"sleep", "30"}, 3 * time.Second},
		{"ignores EOF and SIGTERM", []string{"sh", "-c", `trap "" TERM; sleep 30`}, 6 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(wardenBin, append([]string{"mcp", "stdio", "--data", t.TempDir(), "--"}, c.argv...)...)
			cmd.Stdin = strings.NewReader("") // the client is gone at once
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("warden: %v: %s", err, out)
			}
			if el := time.Since(start); el > c.max {
				t.Fatalf("stopping took %s, want under %s", el, c.max)
			}
		})
	}
}
