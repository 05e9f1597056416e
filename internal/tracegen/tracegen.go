// Package tracegen makes realistic trace records for tests and benchmarks
// of the decisions API: a mix of surfaces, events and decisions (most allow,
// few deny), ~50 tools, ~5,000 sessions, ~20 policies, a few tenants and
// some large inputs, with a handful of deliberately rare values so that a
// benchmark can time the worst case of a scan. It is deterministic: the
// same seed gives the same records.
package tracegen

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Rare values, each carried by exactly RareCount records spread evenly
// over the trace (none among the newest Span/100 records), so a filter on
// one must look far to fill a page.
const (
	RareTool     = "rotate_kms_key"
	RarePolicy   = "no-kms-rotation"
	RareAgent    = "agent-auditor"
	RareSession  = "sess-rare"
	RareText     = "quartz-lantern" // in the input only
	RareDecision = "defer"
	RareSurface  = warden.SurfaceSDK
	RareEvent    = "steps/memoryStore"
	RareTenant   = "tiny"
	RareCount    = 20
)

// Common values a benchmark can filter on.
const (
	CommonTool   = "read_file"
	CommonPolicy = "redact-pii"
	CommonAgent  = "agent-00"
	CommonText   = "rm -rf" // in about 1% of the inputs
)

// Gen makes n records whose times run from End-Span to End, in recording
// order. Record(i) is the i-th; it is safe for concurrent use.
type Gen struct {
	N    int
	End  time.Time
	Span time.Duration
	Seed uint64
	// Sealed gives each record the sealed original of the redaction mark
	// its input holds (Record.Sealed: an envelope of the size and shape
	// package seal writes, of random bytes, not one that opens), as a
	// store with sealing on keeps. Off, the records are the ones the
	// benchmarks of docs/BENCHMARKS.md were measured with; on, only
	// Sealed differs.
	Sealed bool
	rare   int // records between two rare ones
}

// New returns a generator of n records ending at end and spanning span.
func New(n int, end time.Time, span time.Duration, seed uint64) *Gen {
	return &Gen{N: n, End: end, Span: span, Seed: seed, rare: n / RareCount}
}

var (
	tools    = makeTools()
	policies = []string{"no-destructive-shell", "deny-secrets-in-tool-calls", "redact-pii", "no-external-email",
		"approve-payments", "redact-financial-pii-in-answers", "no-prod-db-writes", "injection-guard",
		"limit-http-hosts", "no-private-keys", "mcp-tool-pinning", "a2a-allowed-agents", "memory-retention",
		"knowledge-scope", "rate-limit-tools", "audit-all", "no-shell-in-ci", "pii-in-prompts",
		"block-exfiltration"}
	surfaces = []struct {
		name   string
		weight int
		events []string
		dirs   []string
	}{
		{"aos", 55, []string{"steps/toolCallRequest", "steps/toolCallRequest", "steps/toolCallResult", "steps/toolCallResult",
			"steps/message", "steps/message", "steps/agentTrigger", "steps/memoryContextRetrieval", "steps/knowledgeRetrieval"}, []string{""}},
		{"mcp", 30, []string{"protocols/MCP"}, []string{"outbound", "inbound"}},
		{"hooks", 10, []string{"tool.pre_call", "tool.post_call", "input.pre_submit", "prompt.post_assemble", "session.pre_create"}, []string{""}},
		{"a2a", 5, []string{"message/send", "message/stream", "tasks/get", "protocols/A2A"}, []string{"outbound", "inbound"}},
	}
)

// makeTools returns 50 tool names, the first the most used (Zipf-like
// weights are applied by pickTool).
func makeTools() []string {
	base := []string{CommonTool, "bash", "http_get", "send_email", "write_file", "list_dir", "search_docs",
		"sql_query", "git_commit", "create_ticket", "http_post", "slack_post", "calendar_list", "s3_get",
		"s3_put", "kubectl", "docker_run", "python_exec", "browser_open", "summarize"}
	for i := len(base); i < 50; i++ {
		base = append(base, fmt.Sprintf("tool_%02d", i))
	}
	return base
}

// pickTool picks a tool with weight 1/(k+1).
func pickTool(r *rand.Rand) string {
	// Harmonic weights over 50 tools: sample by inverse CDF on a table.
	return tools[toolTable[r.IntN(len(toolTable))]]
}

var toolTable = func() []int {
	var t []int
	for k := range 50 {
		n := 2000 / (k + 1)
		for range n {
			t = append(t, k)
		}
	}
	return t
}()

const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "

// ID is the id of the i-th record.
func (g *Gen) ID(i int) string { return fmt.Sprintf("0193a4f2-%08x-7000-8000-%012x", i, g.Seed) }

// Record returns the i-th record (0 is the oldest).
func (g *Gen) Record(i int) *audit.Record {
	r := rand.New(rand.NewPCG(g.Seed, uint64(i)))
	step := g.Span / time.Duration(g.N)
	at := g.End.Add(-g.Span + time.Duration(i)*step + time.Duration(r.IntN(1000))*time.Microsecond)
	rec := &audit.Record{
		ID:             fmt.Sprintf("0193a4f2-%08x-7000-8000-%012x", i, g.Seed),
		Time:           at.UTC(),
		RequestID:      fmt.Sprintf("req-%d", i),
		SessionID:      fmt.Sprintf("sess-%04d", r.IntN(5000)),
		AgentID:        fmt.Sprintf("agent-%02d", min(r.IntN(40), r.IntN(40))),
		TurnID:         fmt.Sprintf("turn-%d", r.IntN(30)),
		StepID:         fmt.Sprintf("step-%d", r.IntN(200)),
		LatencyUS:      int64(20 + r.IntN(200)),
		PolicyRevision: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
	w := r.IntN(100)
	for _, s := range surfaces {
		if w < s.weight {
			rec.Surface = s.name
			rec.Event = s.events[r.IntN(len(s.events))]
			rec.Direction = s.dirs[r.IntN(len(s.dirs))]
			break
		}
		w -= s.weight
	}
	if r.IntN(10) == 0 {
		rec.Tenant = "acme"
	}
	switch rec.Event {
	case "steps/toolCallRequest", "steps/toolCallResult", "protocols/MCP", "tool.pre_call", "tool.post_call":
		rec.Tool = pickTool(r)
	}
	if rec.Surface == "mcp" && r.IntN(4) == 0 {
		rec.Tool = "" // tools/list, initialize, notifications
	}
	// Decisions: 94% allow, 3% modify, 2.5% deny, 0.5% ask.
	d := r.IntN(1000)
	pol := policies[r.IntN(len(policies))]
	switch {
	case d < 940:
		rec.Decision, rec.Reason = "allow", "no policy matched; default decision allow"
	case d < 970:
		rec.Decision, rec.PolicyID, rec.Reason = "modify", pol, "redacted: email, phone"
	case d < 995:
		rec.Decision, rec.PolicyID, rec.Reason = "deny", pol, "tool call carries a secret (aws_access_key)"
	default:
		rec.Decision, rec.PolicyID, rec.Reason = "ask", pol, "external email requires approval"
		rec.ReasonCodes = []string{"approval_required"}
	}
	if rec.PolicyID != "" {
		rec.PolicyVersion = "3"
	}
	rec.Results = []warden.Result{
		{Guardian: "policy", PolicyID: rec.PolicyID, PolicyVersion: rec.PolicyVersion, Decision: rec.Decision, Mode: "enforce", Reason: rec.Reason, LatencyUS: 12},
		{Guardian: "policy", PolicyID: "audit-all", PolicyVersion: "1", Decision: "allow", Mode: "audit", LatencyUS: 3},
	}
	cmd := "ls -la /srv/app"
	if r.IntN(100) == 0 {
		cmd = CommonText + " /tmp/build && make"
	}
	ctx := lorem[:r.IntN(len(lorem))]
	if r.IntN(100) == 0 { // a large input: a file's content, a long prompt
		ctx = strings.Repeat(lorem, 100+r.IntN(400)) // 12–60 KB
	}
	// Rare values, evenly spread, none among the newest 1%.
	if g.rare > 0 && i%g.rare == g.rare/2 && i < g.N-g.N/100 {
		rec.Tool, rec.PolicyID, rec.AgentID, rec.SessionID = RareTool, RarePolicy, RareAgent, RareSession
		rec.Decision, rec.Surface, rec.Event, rec.Tenant = RareDecision, RareSurface, RareEvent, RareTenant
		rec.Direction, rec.Reason = "", "held for the key custodian"
		cmd = "rotate " + RareText
	}
	in, _ := json.Marshal(map[string]any{
		"toolCallRequest": map[string]any{"executionId": fmt.Sprintf("ex-%d", i), "toolId": rec.Tool,
			"inputs": []any{map[string]any{"name": "command", "value": cmd}, map[string]any{"name": "cwd", "value": "/home/dev/project"}}},
		"context": map[string]any{
			"agent":   map[string]any{"id": rec.AgentID, "name": "coding assistant", "version": "1.4.2"},
			"session": map[string]any{"id": rec.SessionID},
			"user":    map[string]any{"id": "u-17", "email": "[REDACTED:email:8f3a2b1c]"},
		},
		"reasoning": ctx,
	})
	rec.Input = in
	if rec.Decision == "modify" {
		rec.Output = in
	}
	rec.Views = json.RawMessage(fmt.Sprintf(`{"tool":{"name":%q,"args":{"command":%q}},"session":{"id":%q}}`, rec.Tool, cmd, rec.SessionID))
	if g.Sealed { // last: the draws before it are the same either way
		rec.Sealed = sealed(r, rec, sealedMark, len("someone@example.com"))
	}
	return rec
}

// sealedMark is the mark of the redacted email in every record's input.
const sealedMark = "email:8f3a2b1c"

// sealed is the sealed originals of one mark, as Record.Sealed holds
// them: {"mark":"envelope"}, the envelope in unpadded base64url and laid
// out as package seal's (version 1; tenant, period and session, each
// length-prefixed; an 8-byte key id; a 12-byte nonce; the ciphertext of
// n bytes and a 16-byte tag), its bytes random.
func sealed(r *rand.Rand, rec *audit.Record, mark string, n int) json.RawMessage {
	env := []byte{1}
	for _, s := range []string{rec.Tenant, rec.Time.Format("2006-01"), rec.SessionID} {
		env = binary.AppendUvarint(env, uint64(len(s)))
		env = append(env, s...)
	}
	for range 8 + 12 + n + 16 {
		env = append(env, byte(r.Uint32()))
	}
	b := append([]byte(`{"`), mark...)
	b = append(b, `":"`...)
	b = base64.RawURLEncoding.AppendEncode(b, env)
	return append(b, `"}`...)
}

// Fill records g's records in s, oldest first, from workers concurrent
// callers (so the store batches them as under load: recording order follows
// i within a batch's jitter), and reports progress every tenth.
func Fill(ctx context.Context, s audit.Store, g *Gen, workers int, progress func(done int)) error {
	var next atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= g.N {
					return
				}
				if err := s.Record(ctx, g.Record(i)); err != nil {
					errs <- fmt.Errorf("record %d: %w", i, err)
					return
				}
				if progress != nil && g.N >= 10 && (i+1)%(g.N/10) == 0 {
					progress(i + 1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
