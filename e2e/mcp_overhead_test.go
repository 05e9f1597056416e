package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

// The knobs of TestMCPOverhead, all from the environment.
const (
	overheadEnv        = "WARDEN_MCP_OVERHEAD"         // "1" runs the measurement
	overheadCallsEnv   = "WARDEN_MCP_OVERHEAD_N"       // calls per path per round (default 2000)
	overheadRoundsEnv  = "WARDEN_MCP_OVERHEAD_ROUNDS"  // rounds (default 5)
	overheadMaxEnv     = "WARDEN_MCP_OVERHEAD_MAX_US"  // fail when the added p50 is over this many µs
	overheadArgsEnv    = "WARDEN_MCP_OVERHEAD_ARGS"    // extra flags for warden serve (space-separated)
	overheadProfileEnv = "WARDEN_MCP_OVERHEAD_PROFILE" // write a 5 s CPU profile of warden here (with --pprof)
)

// TestMCPOverhead measures what `warden serve`'s /mcp/{server} adds to an
// MCP tools/call (issue 15: added p50 ≤ 100 µs). One go-sdk server (the
// gateway tests' mcpserver) serves Streamable HTTP on loopback in this
// process; warden serve (built-in pack, a fresh SQLite trace, as a user
// runs it) has it as mcp.servers.up. The same go-sdk client calls tool
// echo sequentially in three sessions — one to the upstream directly, one
// through /mcp/up, one through a plain reverse proxy (the cost of the hop
// alone) — after a warm-up, in rounds that rotate which path goes first,
// and the test logs each path's p50 and p99 and what warden and the proxy
// add. It checks every answer, that the upstream got every call
// and that warden decided each gated call (warden_decisions_total).
//
// It runs only with WARDEN_MCP_OVERHEAD=1 (a measurement, ~30 s):
//
//	WARDEN_MCP_OVERHEAD=1 go test -run TestMCPOverhead -v ./e2e
//
// WARDEN_MCP_OVERHEAD_N and _ROUNDS size it; WARDEN_MCP_OVERHEAD_MAX_US
// makes the added p50 a failing bound; WARDEN_MCP_OVERHEAD_ARGS adds flags
// to warden serve (--trace-log, say).
func TestMCPOverhead(t *testing.T) {
	if os.Getenv(overheadEnv) != "1" {
		t.Skipf("a latency measurement; set %s=1 to run it", overheadEnv)
	}
	calls := envInt(t, overheadCallsEnv, 2000)
	rounds := envInt(t, overheadRoundsEnv, 5)
	maxUS := envInt(t, overheadMaxEnv, 0)

	srv, seen := mcpserver.New()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "mcp:\n  servers:\n    up: {url: %q}\n", up.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--config", cfg, "--data", filepath.Join(dir, "data")}, strings.Fields(os.Getenv(overheadArgsEnv))...)
	w := startServer(t, wardenBinary(t), args...)

	// A plain reverse proxy (net/http/httputil, streaming as it reads, no
	// decisions, no trace) in this process: what one more HTTP hop on
	// loopback costs by itself, the floor of what any gateway adds.
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)

	paths := []struct{ name, url string }{{"direct", up.URL}, {"warden", w.url + "/mcp/up"}, {"proxy", proxy.URL}}
	client := mcp.NewClient(&mcp.Implementation{Name: "overhead", Version: "1"}, nil)
	sessions := make([]*mcp.ClientSession, len(paths))
	ctx := context.Background()
	for i, p := range paths {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", p.name, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	call := func(i int) time.Duration {
		t0 := time.Now()
		res, err := sessions[i].CallTool(ctx, params)
		d := time.Since(t0)
		if err != nil {
			t.Fatalf("%s: tools/call: %v", paths[i].name, err)
		}
		if got := resultText(res); res.IsError || got != "echo: hello" {
			t.Fatalf("%s: tools/call answered %q (error %v), want echo: hello", paths[i].name, got, res.IsError)
		}
		return d
	}
	const warmup = 200
	for i := range paths {
		for range warmup {
			call(i)
		}
	}

	if out := os.Getenv(overheadProfileEnv); out != "" {
		// A CPU profile of warden over the first seconds of the rounds
		// (needs --pprof in WARDEN_MCP_OVERHEAD_ARGS).
		profiled := make(chan struct{})
		t.Cleanup(func() { <-profiled })
		go func() {
			defer close(profiled)
			resp, err := http.Get(w.url + "/debug/pprof/profile?seconds=5")
			if err != nil {
				t.Errorf("profile: %v", err)
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(out)
			if err == nil {
				_, err = io.Copy(f, resp.Body)
				f.Close()
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("profile: %s, %v", resp.Status, err)
			}
		}()
	}
	decided0 := decisionsTotal(t, w.url)
	lat := make([][]time.Duration, len(paths))
	roundP50 := make([][]time.Duration, len(paths))
	for r := range rounds {
		for k := range paths {
			i := (k + r) % len(paths) // alternate which path goes first
			rl := make([]time.Duration, 0, calls)
			for range calls {
				rl = append(rl, call(i))
			}
			lat[i] = append(lat[i], rl...)
			roundP50[i] = append(roundP50[i], quantile(rl, 0.5))
		}
	}
	decided := decisionsTotal(t, w.url) - decided0

	if want := len(paths) * (warmup + rounds*calls); seen.Count("echo") != want {
		t.Errorf("the upstream saw %d echo calls, want %d", seen.Count("echo"), want)
	}
	if gated := rounds * calls; decided < float64(gated) {
		t.Errorf("warden decided %.0f times during %d gated calls, want at least one decision each", decided, gated)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds × %d sequential tools/call (echo) per path after %d warm-up calls; warden: built-in pack, SQLite trace; %.2f decisions per gated call\n",
		rounds, calls, warmup, decided/float64(rounds*calls))
	for i, p := range paths {
		fmt.Fprintf(&b, "%-6s p50 %7.1f µs  p99 %7.1f µs  round p50s %s\n", p.name, us(quantile(lat[i], 0.5)), us(quantile(lat[i], 0.99)), usList(roundP50[i]))
	}
	addedBy := func(i int) time.Duration {
		added := quantile(lat[i], 0.5) - quantile(lat[0], 0.5)
		diffs := make([]time.Duration, rounds)
		for r := range rounds {
			diffs[r] = roundP50[i][r] - roundP50[0][r]
		}
		fmt.Fprintf(&b, "%s: added p50 %.1f µs (per round %s), added p99 %.1f µs\n", paths[i].name,
			us(added), usList(diffs), us(quantile(lat[i], 0.99)-quantile(lat[0], 0.99)))
		return added
	}
	added := addedBy(1)
	addedBy(2)
	t.Log("\n" + b.String())
	if maxUS > 0 && added > time.Duration(maxUS)*time.Microsecond {
		t.Errorf("added p50 %.1f µs, over %s=%d", us(added), overheadMaxEnv, maxUS)
	}
}

// envInt is the positive integer in the environment variable name, or def
// when it is unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// resultText is the text of a tool result's first content.
func resultText(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// quantile returns the q-quantile (nearest rank) of d, sorting a copy.
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func usList(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatFloat(us(d), 'f', 0, 64)
	}
	return "[" + strings.Join(parts, " ") + "] µs"
}

// decisionsTotal sums warden_decisions_total over its labels from /metrics.
func decisionsTotal(t *testing.T, base string) float64 {
	t.Helper()
	return metricSum(t, base, "warden_decisions_total{")
}

// metricSum is the sum of the samples in base's /metrics whose line starts
// with prefix (a metric's name and "{" for all its series, or its name and
// " " for one without labels).
func metricSum(t *testing.T, base, prefix string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}
