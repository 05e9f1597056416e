package e2e

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wardenhq/warden/internal/acsclient"
	"github.com/wardenhq/warden/internal/pgtest"
)

// The fleet tests (issue 14) run two `warden serve` replicas on one
// PostgreSQL database behind Debian's nginx with round-robin upstreams and
// no affinity, each test in a fresh schema of WARDEN_POSTGRES_URL's
// database (pgtest.SchemaURL). They need that variable and nginx; .ci/run
// provides both.

// balancer is nginx in front of the replicas, round-robin, no affinity.
// Each answer carries X-Upstream: the replica (host:port) that served it.
type balancer struct {
	url string
	cmd *exec.Cmd
	dir string
}

// served counts the requests nginx passed to each replica (host:port), from
// its access log.
func (b *balancer) served(t *testing.T) map[string]int {
	t.Helper()
	var log []byte
	// nginx writes a request's log line once the answer is done.
	for range 20 {
		var err error
		if log, err = os.ReadFile(filepath.Join(b.dir, "access.log")); err != nil {
			t.Fatal(err)
		}
		if len(log) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if l != "" && l != "-" {
			m[l]++
		}
	}
	return m
}

// startNginx runs nginx (in the foreground, its files in a temporary
// directory) balancing round-robin over upstreams (host:port).
func startNginx(t *testing.T, upstreams ...string) *balancer {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/sbin/nginx"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nginx is not installed: .ci/run installs it for the fleet tests")
		}
		t.Skip("nginx is not installed: the fleet tests need a real balancer")
	}
	dir := t.TempDir()
	port := freePort(t)
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "    server %s;\n", u)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n" // workers write the temp paths below, in this test's directory
	}
	conf := fmt.Sprintf(`%sworker_processes 1;
daemon off;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 1024; }
http {
  log_format upstream '$upstream_addr';
  access_log %[2]s/access.log upstream;
  client_body_temp_path %[2]s/body;
  proxy_temp_path %[2]s/proxy;
  fastcgi_temp_path %[2]s/fastcgi;
  uwsgi_temp_path %[2]s/uwsgi;
  scgi_temp_path %[2]s/scgi;
  upstream wardens {
%[3]s    keepalive 16;
  }
  server {
    listen 127.0.0.1:%[4]d;
    client_max_body_size 16m;
    location / {
      proxy_pass http://wardens;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_read_timeout 120s;
      proxy_next_upstream off;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`, user, dir, servers.String(), port)
	cfg := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &output{url: make(chan string, 1)}
	cmd := exec.Command(bin, "-e", filepath.Join(dir, "error.log"), "-p", dir, "-c", cfg)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so the cleanup stops the workers too (they
	// hold the output pipe).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	b := &balancer{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, dir: dir}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return b
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %s\n%s", out, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx is not listening after 10s: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fleet is two replicas on one database behind a balancer.
type fleet struct {
	store    string
	replicas []*server
	lb       *balancer
	config   string
}

// hostPort is a server URL's host:port.
func hostPort(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// startFleet starts two replicas sharing store and the config text extra
// (besides store:, the ACS key and the gateways' session key), and nginx in
// front of them.
func startFleet(t *testing.T, extra string, args ...string) *fleet {
	t.Helper()
	store := pgtest.SchemaURL(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("store: %q\nacs:\n  keys:\n    k1: %q\ngateways:\n  session_key: %q\n%s",
		store, "hex:"+hex.EncodeToString(acsTestKey), "hex:"+strings.Repeat("ab", 32), extra)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fleet{store: store, config: cfg}
	bin := wardenBinary(t)
	var ups []string
	for i := range 2 {
		data := filepath.Join(dir, fmt.Sprintf("data%d", i))
		if i > 0 {
			// Every replica redacts with the same trace.key (docs/postgres.md),
			// so a secret gets the same tag whichever replica saw it.
			key, err := os.ReadFile(filepath.Join(dir, "data0", "trace.key"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(data, "trace.key"), key, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		a := append([]string{"--config", cfg, "--data", data}, args...)
		s := startServer(t, bin, a...)
		f.replicas = append(f.replicas, s)
		ups = append(ups, hostPort(t, s.url))
	}
	f.lb = startNginx(t, ups...)
	return f
}

// upstreamRecorder is an http.RoundTripper that notes which replica served
// each answer (nginx's X-Upstream).
type upstreamRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (u *upstreamRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		u.mu.Lock()
		u.seen = append(u.seen, resp.Header.Get("X-Upstream"))
		u.mu.Unlock()
	}
	return resp, err
}

func (u *upstreamRecorder) distinct() map[string]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := map[string]int{}
	for _, s := range u.seen {
		m[s]++
	}
	return m
}

// TestFleetACSAlternating: an ACS session whose requests alternate between
// two replicas through nginx advances its chain_hash step by step as on one
// replica, both replicas served it, the chain GET /api/acs/sessions/{id}
// serves from either replica is the same and complete, and a request_id
// accepted by one replica is refused as a replay by the other.
func TestFleetACSAlternating(t *testing.T) {
	f := startFleet(t, "")
	rec := &upstreamRecorder{}
	ctx := context.Background()
	c := acsclient.New(acsclient.Options{URL: f.lb.url + "/acs", KeyID: "k1", Key: acsTestKey, AgentID: "fleet-agent",
		HTTPClient: &http.Client{Transport: rec, Timeout: 30 * time.Second}})
	hello, err := c.Handshake(ctx, []string{"steps/sessionStart", "steps/userMessage", "steps/toolCallRequest",
		"steps/toolCallResult", "steps/agentResponse"})
	acsStep(t, c, hello, err, "allow", nil)
	head := ""
	r, err := c.Call(ctx, "steps/sessionStart", map[string]any{"agent": map[string]any{"name": "fleet"}})
	acsStep(t, c, r, err, "allow", &head)
	for i := range 6 {
		r, err = c.Call(ctx, "steps/userMessage", map[string]any{"content": []any{map[string]any{"type": "text", "value": fmt.Sprintf("message %d", i)}}})
		acsStep(t, c, r, err, "allow", &head)
		r, err = c.Call(ctx, "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "search"},
			"arguments": map[string]any{"q": map[string]any{"value": fmt.Sprintf("query %d", i)}}})
		acsStep(t, c, r, err, "allow", &head)
	}
	served := rec.distinct()
	if len(served) != 2 {
		t.Fatalf("the balancer sent the session to %v, want both replicas", served)
	}
	// Either replica serves the same chain: 13 entries ending at head.
	var chains []string
	for _, s := range f.replicas {
		code, body := send(t, "GET", s.url+"/api/acs/sessions/"+c.SessionID(), "", "", "", "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/acs/sessions: %d %s", code, body)
		}
		var sess struct {
			Entries []map[string]any `json:"entries"`
		}
		if err := json.Unmarshal([]byte(body), &sess); err != nil {
			t.Fatal(err)
		}
		if len(sess.Entries) != 13 || sess.Entries[len(sess.Entries)-1]["entry_hash"] != head {
			t.Fatalf("replica %s: %d entries, last %v, want 13 ending at %s\n%s", s.url, len(sess.Entries), sess.Entries[len(sess.Entries)-1]["entry_hash"], head, body)
		}
		for i := 1; i < len(sess.Entries); i++ {
			if sess.Entries[i]["previous_hash"] != sess.Entries[i-1]["entry_hash"] {
				t.Fatalf("replica %s: entry %d does not follow entry %d", s.url, i, i-1)
			}
		}
		chains = append(chains, body)
	}
	if chains[0] != chains[1] {
		t.Fatalf("the replicas serve different chains:\n%s\n%s", chains[0], chains[1])
	}
	// A request accepted by replica 0 is a replay on replica 1.
	e := c.Request("steps/userMessage", map[string]any{"content": []any{map[string]any{"type": "text", "value": "once"}}})
	if err := e.Sign(); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range f.replicas {
		code, ans := send(t, "POST", s.url+"/acs", "application/json", "", "", string(body))
		resp, err := acsclient.ParseResponse([]byte(ans))
		if code != http.StatusOK || err != nil {
			t.Fatalf("replica %d: %d %v %s", i, code, err, ans)
		}
		switch {
		case i == 0 && resp.Error != nil:
			t.Fatalf("replica 0 refused the first sending: %s", ans)
		case i == 1 && resp.ErrorCode() != -32005:
			t.Fatalf("replica 1 answered a replayed request_id with %s, want error -32005", ans)
		}
	}
}

// TestFleetTrifecta: the three steps of the lethal trifecta, each on
// another replica (the balancer alternates), are asked at the third.
func TestFleetTrifecta(t *testing.T) {
	f := startFleet(t, "")
	step := aosToolStep
	// Each step straight to another replica, so the test does not depend
	// on how nginx happens to alternate.
	r := f.replicas
	// Replica 1's /api/runs/stream carries what replica 0 decides.
	events := sseRuns(t, r[1].url+"/api/runs/stream?session=fleet-trifecta")
	if a := postAOS(t, r[0].url, step(1, "fleet-trifecta", "read_file", map[string]any{"path": "/home/ann/.ssh/id_rsa"})); a.Result.Decision != "allow" {
		t.Fatalf("step 1: %+v", a)
	}
	if a := postAOS(t, r[1].url, step(2, "fleet-trifecta", "WebFetch", map[string]any{"url": "https://news.example.com/"})); a.Result.Decision != "allow" {
		t.Fatalf("step 2: %+v", a)
	}
	a := postAOS(t, r[0].url, step(3, "fleet-trifecta", "send_email", map[string]any{"to": "eve@example.net", "body": "hi"}))
	if a.Result.Decision != "deny" || len(a.Result.ReasonCode) == 0 || a.Result.ReasonCode[0] != "approval_required" {
		t.Fatalf("step 3: %+v, want deny approval_required (asked)", a)
	}
	runs := sessionRuns(t, r[1].url, "fleet-trifecta")
	if len(runs) != 3 || runs[2]["decision"] != "ask" || runs[2]["policy_id"] != "ask-lethal-trifecta" {
		t.Fatalf("records (from the other replica): %v", runs)
	}
	for i, want := range runs {
		select {
		case id := <-events:
			if id != want["id"] {
				t.Fatalf("replica 1's stream: record %d is %s, want %v", i, id, want["id"])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("replica 1's /api/runs/stream did not carry record %d (%v, decided on replica %d) within 10s", i, want["id"], []int{0, 1, 0}[i])
		}
	}
}

// sseRuns subscribes to a /api/runs/stream URL and returns the ids of the
// records it carries; it returns once the subscription is in place.
func sseRuns(t *testing.T, u string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && lines.Text() != ": subscribed" {
	}
	ids := make(chan string, 64)
	go func() {
		defer resp.Body.Close()
		for lines.Scan() {
			if id, ok := strings.CutPrefix(lines.Text(), "id: "); ok {
				ids <- id
			}
		}
	}()
	return ids
}

// TestFleetMCP: the official MCP TypeScript client runs a whole session
// (initialize, tools/list, tools/call, prompts, resources, DELETE) with
// server-everything through nginx; the balancer's log shows both replicas
// served it. Then a tools/call that a policy asks about is held on replica
// 0 (the official Go SDK client, connected there), approved through replica
// 1's API, and the client gets the tool's result.
func TestFleetMCP(t *testing.T) {
	nodeDir := nodeGroup(t, "mcp-http")
	upstream := serverEverything(t, nodeDir)
	askPolicy := filepath.Join(t.TempDir(), "ask.yaml")
	if err := os.WriteFile(askPolicy, []byte(`id: e2e-ask-echo-approval
version: "1"
description: an echo that says it needs approval is asked.
events: ["protocols/MCP"]
when: 'direction == "outbound" && tool.name == "echo" && string(tool.args.message).contains("needs-approval")'
decision: ask
reason: this echo needs a human's approval
`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, fmt.Sprintf("mcp:\n  servers:\n    everything: {url: %q}\napprovals: {wait: 60s}\n", upstream),
		"--builtin=false", "--policy", filepath.Join(nodeDir, "policies/mcp.yaml"), "--policy", askPolicy)
	runScript(t, nodeDir, 90*time.Second, "mcp_http_client.mjs", "--url", f.lb.url+"/mcp/everything")
	served := f.lb.served(t)
	if len(served) != 2 || served[hostPort(t, f.replicas[0].url)] < 2 || served[hostPort(t, f.replicas[1].url)] < 2 {
		t.Fatalf("the balancer sent the MCP session's requests to %v, want both replicas several times", served)
	}
	for _, s := range f.replicas {
		read := func() []traceRec { return traceFromHTTP(t, s.url) }
		// Either replica reads what both decided (one trace).
		eventuallyTrace(t, read, "mcp", "deny", "e2e-deny-get-env")
		eventuallyTrace(t, read, "mcp", "modify", "e2e-hide-tiny-image")
	}

	// Held on replica 0, approved on replica 1.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-fleet", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: f.replicas[0].url + "/mcp/everything", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	type result struct {
		r   *mcp.CallToolResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "needs-approval please"}})
		got <- result{r, err}
	}()
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, body := send(t, "GET", f.replicas[1].url+"/api/approvals?state=pending", "", "", "", "")
		var page struct {
			Approvals []struct {
				ID   string `json:"id"`
				Hold bool   `json:"hold"`
			} `json:"approvals"`
		}
		if json.Unmarshal([]byte(body), &page) == nil && len(page.Approvals) == 1 && page.Approvals[0].Hold {
			id = page.Approvals[0].ID
		}
	}
	if id == "" {
		t.Fatal("no held approval appeared on replica 1 within 20s")
	}
	select {
	case r := <-got:
		t.Fatalf("the asked call was answered before anyone decided: %+v %v", r.r, r.err)
	default:
	}
	approved := time.Now()
	if code, body := send(t, "POST", f.replicas[1].url+"/api/approvals/"+id, "application/json", "", "", `{"decision":"approve","reason":"fleet e2e"}`); code != http.StatusOK {
		t.Fatalf("approve on replica 1: %d %s", code, body)
	}
	select {
	case r := <-got:
		if r.err != nil || r.r.IsError || len(r.r.Content) == 0 {
			t.Fatalf("the approved call: %+v %v", r.r, r.err)
		}
		tc, ok := r.r.Content[0].(*mcp.TextContent)
		if !ok || !strings.Contains(tc.Text, "needs-approval please") {
			t.Fatalf("the approved call's result: %+v", r.r.Content)
		}
		t.Logf("released %v after the approval on the other replica", time.Since(approved).Round(time.Millisecond))
		if d := time.Since(approved); d > time.Second {
			t.Errorf("released %v after the approval, want within 1s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held call was not released within 10s of its approval on the other replica")
	}
	// A second decision, on either replica, is a conflict.
	for _, s := range f.replicas {
		if code, body := send(t, "POST", s.url+"/api/approvals/"+id, "application/json", "", "", `{"decision":"deny"}`); code != http.StatusConflict {
			t.Errorf("a second decision on %s: %d %s, want 409", s.url, code, body)
		}
	}
}

// cutProxy is a TCP proxy to PostgreSQL that the test can cut (every
// connection closed, new ones refused) and restore: PostgreSQL unreachable
// for the replica without stopping the machine's server.
type cutProxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	p := &cutProxy{target: target, conns: map[net.Conn]struct{}{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[u] = struct{}{}, struct{}{}
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close(); c.Close() }()
			go func() { io.Copy(c, u); u.Close(); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection through it.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// restore listens again on the same address.
func (p *cutProxy) restore(t *testing.T) {
	t.Helper()
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(l)
}

// TestFleetPostgresOutage: PostgreSQL unreachable for 10 s under load. The
// replica fails closed (denials carry trace_unavailable), /readyz answers
// 503 with a reason during the outage and 200 within 5 s after it, the
// replica recovers without a restart, and every decision it answered
// otherwise is in PostgreSQL afterwards.
func TestFleetPostgresOutage(t *testing.T) {
	store := pgtest.SchemaURL(t)
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.addr
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("store: %q\n", u.String())), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"))

	type answer struct {
		session, decision, trace string
		codes                    []string
		at                       time.Time
	}
	var (
		mu      sync.Mutex
		answers []answer
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		failed  int
	)
	client := &http.Client{Timeout: 15 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				session := fmt.Sprintf("outage-%d-%d", w, i)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"ex-%d","toolId":"t-search","inputs":[{"name":"q","value":"x"}]},"context":{"session":{"id":%q},"agent":{"id":"load","tools":[{"id":"t-search","name":"search","type":"function_call"}]}}}}`, i, i, session)
				resp, err := client.Post(srv.url+"/aos", "application/json", strings.NewReader(body))
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					continue
				}
				var a aosAnswer
				err = json.NewDecoder(resp.Body).Decode(&a)
				resp.Body.Close()
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					continue
				}
				mu.Lock()
				answers = append(answers, answer{session, a.Result.Decision, a.Result.Data.TraceID, a.Result.ReasonCode, time.Now()})
				mu.Unlock()
			}
		}()
	}
	readyz := func() (int, string) {
		resp, err := http.Get(srv.url + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	time.Sleep(2 * time.Second)
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz before the outage: %d %s", code, body)
	}
	cutAt := time.Now()
	proxy.cut()
	saw503 := ""
	for time.Since(cutAt) < 10*time.Second {
		if code, body := readyz(); code == http.StatusServiceUnavailable && saw503 == "" {
			saw503 = body
		}
		time.Sleep(250 * time.Millisecond)
	}
	proxy.restore(t)
	restoredAt := time.Now()
	var readyAfter time.Duration
	for time.Since(restoredAt) < 15*time.Second {
		if code, _ := readyz(); code == http.StatusOK {
			readyAfter = time.Since(restoredAt)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // load after the recovery
	close(stop)
	wg.Wait()

	if saw503 == "" {
		t.Error("/readyz never answered 503 during the outage")
	} else {
		t.Logf("/readyz during the outage: %s", strings.TrimSpace(saw503))
	}
	if readyAfter == 0 || readyAfter > 5*time.Second {
		t.Errorf("/readyz was 200 again %v after PostgreSQL returned, want within 5s", readyAfter)
	}
	var allowed, unavailable, afterRecovery, labelsDenied int
	recorded := map[string]bool{}
	for _, a := range answers {
		switch {
		case a.decision == "deny" && len(a.codes) > 0 && a.codes[0] == "trace_unavailable":
			unavailable++
		case a.decision == "allow":
			allowed++
			recorded[a.trace] = false
			if a.at.After(restoredAt.Add(readyAfter)) {
				afterRecovery++
			}
		case a.decision == "deny" && len(a.codes) > 0 && a.codes[0] == "labels_unavailable":
			// The session's labels could not be read at the cut, but the
			// denial was recorded: fail closed too, and in the trace.
			labelsDenied++
			recorded[a.trace] = false
		default:
			t.Errorf("session %s: %s %v, want allow, or deny trace_unavailable", a.session, a.decision, a.codes)
		}
	}
	if unavailable == 0 || allowed == 0 || afterRecovery == 0 {
		t.Fatalf("answers: %d allowed (%d after the recovery), %d denied trace_unavailable; want some of each", allowed, afterRecovery, unavailable)
	}
	// Every allowed answer's record is in PostgreSQL (read directly).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT id FROM runs")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, ok := recorded[id]; ok {
			recorded[id] = true
		}
		n++
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	missing := 0
	for _, ok := range recorded {
		if !ok {
			missing++
		}
	}
	t.Logf("%d answers (%d allowed, %d after the recovery; %d denied trace_unavailable, %d labels_unavailable; %d requests without an answer); %d records in PostgreSQL; /readyz 200 %v after PostgreSQL returned",
		len(answers), allowed, afterRecovery, unavailable, labelsDenied, failed, n, readyAfter.Round(time.Millisecond))
	if missing > 0 {
		t.Fatalf("%d answered and recorded decisions are not in PostgreSQL", missing)
	}
}

// TestFleetKill9: load through nginx on two replicas sharing PostgreSQL and
// the JetStream decision stream; replica 0 is killed with SIGKILL under
// load. Every decision either replica answered is in PostgreSQL and on the
// stream exactly once (counted by Nats-Msg-Id), the stream holds nothing
// else, and `warden verify --store` passes.
func TestFleetKill9(t *testing.T) {
	natsURL := os.Getenv("WARDEN_NATS_URL")
	if natsURL == "" {
		t.Skip("WARDEN_NATS_URL is not set: the fleet's stream test needs NATS JetStream")
	}
	name := fmt.Sprintf("FLEET_%d", time.Now().UnixNano())
	subject := "fleet." + strings.ToLower(name)
	nc, err := nats.Connect(natsURL, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, name)
	})
	f := startFleet(t, fmt.Sprintf("stream:\n  nats: {url: %q, stream: %s, subject: %s}\ninstance: {heartbeat: 200ms}\n", natsURL, name, subject))
	l := startLoad(t, f.lb.url+"/aos", workers, "fleetkill")
	time.Sleep(loadTime)
	if err := f.replicas[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = f.replicas[0].wait(t, 10*time.Second)
	time.Sleep(loadTime) // the survivor carries the load
	l.signal()
	l.halt()
	t.Logf("%s", l.summary())
	if len(l.answers) == 0 {
		t.Fatal("nothing answered")
	}

	// The survivor publishes what the dead replica had not (it takes the
	// lease once the dead one's expires).
	live := f.replicas[1]
	deadline := time.Now().Add(90 * time.Second)
	for {
		var ready struct {
			Stream struct {
				Records   int64 `json:"records"`
				Connected bool  `json:"connected"`
			} `json:"stream"`
		}
		_, b := send(t, "GET", live.url+"/readyz", "", "", "", "")
		if json.Unmarshal([]byte(b), &ready) == nil && ready.Stream.Connected && ready.Stream.Records == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream did not catch up within 90s: /readyz %s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Every answered decision is in PostgreSQL.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT id FROM runs")
	if err != nil {
		t.Fatal(err)
	}
	inPG := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		inPG[id] = true
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	missingPG := 0
	for req, trace := range l.answers {
		if trace == "" || !inPG[trace] {
			missingPG++
			if missingPG < 5 {
				t.Errorf("answered request %s (record %q) is not in PostgreSQL", req, trace)
			}
		}
	}
	// Every record is on the stream exactly once, and nothing else is.
	onStream, _, total := readStream(t, js, name, nil)
	twice, missingStream := 0, 0
	for id, n := range onStream {
		if n > 1 {
			twice++
		}
		if !inPG[id] {
			t.Errorf("message %s is no record of the trace", id)
		}
	}
	for id := range inPG {
		if onStream[id] == 0 {
			missingStream++
		}
	}
	t.Logf("answered %d; PostgreSQL %d records; stream %d messages, %d distinct; missing from PostgreSQL %d, from the stream %d; duplicated %d",
		len(l.answers), len(inPG), total, len(onStream), missingPG, missingStream, twice)
	if missingPG > 0 || missingStream > 0 || twice > 0 || total != len(inPG) {
		t.Fatalf("the trace or the stream lost or repeated decisions")
	}
	out, err := exec.Command(wardenBinary(t), "verify", "--store", f.store).CombinedOutput()
	if err != nil {
		t.Fatalf("warden verify --store: %v\n%s", err, out)
	}
	t.Logf("warden verify --store: %s", strings.TrimSpace(string(out)))
}
