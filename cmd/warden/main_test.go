package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/sharedtest"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

// shared is sharedtest.Path: rel inside WARDEN_SHARED, or a skip.
func shared(t testing.TB, rel ...string) string { t.Helper(); return sharedtest.Path(t, rel...) }

// cli runs the command in-process and returns its exit code and outputs.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const testPolicies = `id: no-delete
version: "2"
events: ["steps/toolCallRequest", "tool.pre_call"]
when: 'tool.name == "delete_database"'
decision: deny
reason: deleting databases is not allowed
---
id: redact-cards
version: "1"
events: ["steps/*"]
when: '"credit_card" in pii(text)'
decision: modify
modify:
  - redact: [credit_card]
`

func toolCall(tool, value string) string {
	b, _ := json.Marshal(map[string]any{
		"toolCallRequest": map[string]any{"executionId": "e1", "toolId": tool,
			"inputs": []any{map[string]any{"name": "v", "value": value}}},
		"context": map[string]any{"session": map[string]any{"id": "s1"}},
	})
	return string(b)
}

func TestEvalExitCodes(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", testPolicies)
	tests := []struct {
		name, event, stdin string
		code               int
		want               string
	}{
		{"allow", "steps/toolCallRequest", toolCall("read_file", "notes.txt"), exitOK, `"decision": "allow"`},
		{"deny", "steps/toolCallRequest", toolCall("delete_database", "prod"), exitDeny, `"policyId": "no-delete"`},
		{"modify", "steps/toolCallRequest", toolCall("pay", "card 4111 1111 1111 1111"), exitModify, `[REDACTED:credit_card]`},
		{"whole aos request", "aos", `{"jsonrpc":"2.0","id":7,"method":"steps/toolCallRequest","params":` + toolCall("delete_database", "x") + `}`, exitDeny, `"id": 7`},
		{"generic hook event", "tool.pre_call", `{"tool_name":"x"}`, exitOK, `"decision": "allow"`},
		{"invalid params", "steps/toolCallRequest", `{"toolCallRequest":{"inputs":"no"}}`, exitError, ""},
		{"not json", "aos", `{`, exitError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, tt.stdin, "eval", "--event", tt.event, "--policy", pol)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("stdout lacks %q:\n%s", tt.want, out)
			}
			if tt.code == exitError && (errOut == "" || strings.Count(strings.TrimSpace(errOut), "\n") > 0) {
				t.Fatalf("want one error line on stderr, got %q", errOut)
			}
		})
	}
}

func TestEvalSeedWithBuiltinPack(t *testing.T) {
	in, err := os.ReadFile(shared(t, "aos", "examples", "seed000_01_steps_toolCallRequest.json"))
	if err != nil {
		t.Fatalf("the seed examples are needed (WARDEN_SHARED): %v", err)
	}
	code, out, errOut := cli(t, string(in), "eval", "--event", "aos")
	if code != exitOK || !strings.Contains(out, `"id": "13fa8d6f-8f9f-4d01-ba6b-db99d84d77de"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", testPolicies)
	bad := writeFile(t, dir, "bad.yaml", "id: x\nversion: \"1\"\nevents: [\"steps/*\"]\nwhen: 'tool.name =='\ndecision: deny\n")
	other := writeFile(t, dir, "other.yaml", "id: other\nversion: \"1\"\nevents: [tool.pre_call]\ndecision: allow\n")
	empty := writeFile(t, dir, "empty.yaml", "")
	comments := writeFile(t, dir, "comments.yaml", "# nothing yet\n\n")
	typo := writeFile(t, dir, "typo.yaml", "id: t\nversion: \"1\"\nevents: [tool.precall]\ndecision: deny\n")
	clash := writeFile(t, dir, "clash.yaml", "id: deny-secrets-in-tool-calls\nversion: \"1\"\nevents: [tool.pre_call]\ndecision: deny\n")
	cfgBad := writeFile(t, dir, "warden.yaml", "defaultDecision: maybe\n")
	cfgGood := writeFile(t, dir, "ok.yaml", "defaultDecision: deny\npolicies: [good.yaml]\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"builtin pack", nil, exitOK, "ok: " + packPolicies(t, 0) + " from the built-in pack, 0 hooks, revision "},
		{"good policy", []string{"--policy", good}, exitOK, "ok: " + packPolicies(t, 2) + " from the built-in pack + " + good + ", 0 hooks"},
		{"without the pack", []string{"--builtin=false", "--policy", good}, exitOK, "ok: 2 policies from " + good + ", 0 hooks"},
		{"config with policies", []string{"--config", cfgGood}, exitOK, "ok: " + packPolicies(t, 2) + " from the built-in pack + " + good},
		{"config and flag add up", []string{"--config", cfgGood, "--policy", other, "--builtin=false"}, exitOK, "ok: 3 policies from " + good + ", " + other},
		{"empty file", []string{"--policy", empty}, exitError, empty + ":1: no policy in this file"},
		{"comment-only file", []string{"--policy", comments}, exitError, comments + ":1: no policy in this file"},
		{"unknown event", []string{"--policy", typo}, exitError, typo + `:3: events: "tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`},
		{"id in pack and file", []string{"--policy", clash}, exitError, clash + `:1: policy id "deny-secrets-in-tool-calls" is already defined by the built-in pack (pack/10-secrets.yaml:4): rename this policy, or leave the pack out with --builtin=false`},
		{"id clash without the pack", []string{"--policy", clash, "--builtin=false"}, exitOK, "ok: 1 policies"},
		{"cel error names file:line", []string{"--policy", bad}, exitError, bad + ":4:"},
		{"config error names file:line", []string{"--config", cfgBad}, exitError, cfgBad + ":1: defaultDecision"},
		{"missing file", []string{"--policy", filepath.Join(dir, "nope.yaml")}, exitError, "nope.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", append([]string{"check"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.want, out, errOut)
			}
		})
	}
}

func TestCheckRejectsInvalidHookDeclarations(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, yaml, want string }{
		{"unknown event", "hooks:\n  - name: a\n    events: [tool.pre_cal]\n    command: [true]\n", ":3: hooks[0].events[0]: \"tool.pre_cal\" matches no event in the catalog (did you mean \"tool.pre_call\"?)"},
		{"sync on async-only", "hooks:\n  - name: a\n    events: [message.delta]\n    command: [true]\n", ":3: hooks[0].events: hook \"a\": mode sync on async-only event message.delta"},
		{"unknown handler kind", "hooks:\n  - name: a\n    events: [tool.pre_call]\n    grpc: {url: x}\n", `:4: hooks[0]: unknown key "grpc"`},
		{"bad duration", "hooks:\n  - name: a\n    events: [tool.pre_call]\n    timeout: soon\n    command: [true]\n", ":4: hooks[0].timeout: expected a duration of at least 1ns such as 30s, got \"soon\""},
		{"when does not compile", "hooks:\n  - name: a\n    events: [tool.pre_call]\n    when: 'tool.name =='\n    command: [true]\n", ":4: hooks[0].when: Syntax error"},
		{"command not found", "hooks:\n  - name: a\n    events: [tool.pre_call]\n    command: [/no/such/hook]\n", `:2: hook "a":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeFile(t, dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml", tt.yaml)
			code, out, errOut := cli(t, "", "check", "--config", cfg)
			if code != exitError || !strings.Contains(errOut, cfg+tt.want) {
				t.Fatalf("exit %d, stderr lacks %q:\n%s%s", code, cfg+tt.want, out, errOut)
			}
		})
	}
	ok := writeFile(t, dir, "ok.yaml", "hooks:\n  - name: a\n    events: [\"tool.*\"]\n    mode: async\n    command: [true]\n")
	if code, out, errOut := cli(t, "", "check", "--config", ok); code != exitOK || !strings.Contains(out, "1 hooks") {
		t.Fatalf("valid config: %d %s%s", code, out, errOut)
	}
}

func TestHooksDispatchExitCodes(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "warden.yaml", "hooks:\n  - name: deny-rm\n    events: [tool.pre_call]\n    when: 'tool.name == \"rm\"'\n    command: [sh, -c, 'cat >/dev/null; echo {\\\"deny\\\": true, \\\"deny_reason\\\": \\\"no rm\\\"}']\n")
	data := filepath.Join(dir, "data")
	tests := []struct {
		name, payload string
		code          int
		want          string
	}{
		{"allow", `{"session_id":"s","tool_name":"ls","tool_input":{}}`, exitOK, `"decision": "allow"`},
		{"deny by hook", `{"session_id":"s","tool_name":"rm","tool_input":{}}`, exitDeny, `"deny_reason": "no rm"`},
		{"modify by the built-in pack", `{"session_id":"s","tool_name":"pay","tool_input":{"card":"4111 1111 1111 1111"}}`, exitModify, `[REDACTED:credit_card]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, tt.payload, "hooks", "dispatch", "tool.pre_call", "--config", cfg, "--data", data)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d (want %d), stdout lacks %q:\n%s%s", code, tt.code, tt.want, out, errOut)
			}
		})
	}
	code, out, _ := cli(t, "", "runs", "--data", data, "--event", "tool.pre_call", "-o", "json")
	if code != exitOK || strings.Count(out, `"event": "tool.pre_call"`) != 3 {
		t.Fatalf("dispatches not in the trace:\n%s", out)
	}
	if code, _, errOut := cli(t, "{}", "hooks", "dispatch", "tool.nope", "--data", ""); code != exitError || !strings.Contains(errOut, "unknown hook event") {
		t.Fatalf("unknown event: %d %s", code, errOut)
	}
}

func TestRuns(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, d := range []string{"allow", "deny", "modify"} {
		r := &audit.Record{ID: "r" + d, Time: time.Unix(int64(1000+i), 0), Event: "steps/toolCallRequest",
			Surface: "aos", SessionID: "s-" + d, Decision: d, Reason: "because " + d, Input: json.RawMessage(`{}`),
			Results: []warden.Result{}}
		if err := st.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// Read while the writer is still open, as `warden runs` does next to a server.
	code, out, errOut := cli(t, "", "runs", "--data", dir, "-o", "json", "--decision", "deny")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 1 || recs[0].ID != "rdeny" {
		t.Fatalf("got %v %+v", err, recs)
	}
	code, out, _ = cli(t, "", "runs", "--data", dir)
	if code != exitOK || strings.Count(out, "\n") != 4 || !strings.HasPrefix(strings.Split(out, "\n")[1], "1970-01-01T00:16:42") {
		t.Fatalf("table newest first, got:\n%s", out)
	}
	// Paging: --last 1, then --after the id it gave.
	code, out, _ = cli(t, "", "runs", "--data", dir, "-o", "json", "--last", "1", "--after", "rmodify")
	if err := json.Unmarshal([]byte(out), &recs); code != exitOK || err != nil || len(recs) != 1 || recs[0].ID != "rdeny" {
		t.Fatalf("--after rmodify: exit %d, %v %+v", code, err, recs)
	}
	if code, out, _ = cli(t, "", "runs", "--data", dir, "-o", "json", "--decision", "ask"); code != exitOK || out != "[]\n" {
		t.Fatalf("no records: exit %d, %q", code, out)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"runs", "--data", dir, "-o", "yaml"},
		{"runs", "--data", dir, "--decision", "maybe"},
		{"runs", "--data", dir, "--last", "0"},
		{"runs", "--data", dir, "--last", "10001"},
		{"runs", "--data", filepath.Join(dir, "missing")},
		{"runs", "--data", dir, "--after", "no-such-record"},
	} {
		if code, _, errOut := cli(t, "", args...); code != exitError || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestUsageAndVersion(t *testing.T) {
	if code, out, _ := cli(t, "", "version"); code != exitOK || !strings.HasPrefix(out, "warden ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := cli(t, "", "frobnicate"); code != exitError || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %q", code, errOut)
	}
	if code, _, _ := cli(t, "", "eval"); code != exitError {
		t.Fatalf("eval without --event: %d", code)
	}
	if code, _, _ := cli(t, "", "serve", "--addr"); code != exitError {
		t.Fatalf("serve with a dangling flag: %d", code)
	}
}

// eval --tenant decides by the tenant's set; check prints each tenant's set.
func TestEvalAndCheckTenants(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "acme"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "acme/p.yaml", "id: acme-no-read\nversion: \"1\"\nevents: [steps/toolCallRequest]\nwhen: 'tool.name == \"read_file\"'\ndecision: deny\nreason: acme reads nothing\n")
	cfg := writeFile(t, dir, "warden.yaml", "tenants:\n  acme: {policies: [./acme]}\n")
	in := toolCall("read_file", "notes.txt")
	if code, out, errOut := cli(t, in, "eval", "--event", "steps/toolCallRequest", "--config", cfg); code != exitOK {
		t.Errorf("shared set: exit %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, in, "eval", "--event", "steps/toolCallRequest", "--config", cfg, "--tenant", "acme"); code != exitDeny || !strings.Contains(out, "acme-no-read") {
		t.Errorf("--tenant acme: exit %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, in, "eval", "--event", "steps/toolCallRequest", "--config", cfg, "--tenant", "acmee"); code != exitError || !strings.Contains(errOut, `"acmee"`) {
		t.Errorf("--tenant acmee: exit %d %s", code, errOut)
	}
	code, out, _ := cli(t, "", "check", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "ok: tenant acme: ") {
		t.Errorf("check: exit %d %s", code, out)
	}
}

// The table's columns and the filters --surface, --tool, --policy, --since.
func TestRunsFilters(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	for _, r := range []*audit.Record{
		{ID: "old", Time: now.Add(-2 * time.Hour), Event: "steps/toolCallRequest", Surface: "aos", Tool: "bash", Decision: "allow"},
		{ID: "mcp-call", Time: now.Add(-30 * time.Minute), Event: "protocols/MCP", Surface: "mcp", Direction: "outbound", Tool: "send_email",
			Decision: "deny", PolicyID: "no-external-email", Input: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_email"}}`)},
		{ID: "mcp-list", Time: now.Add(-20 * time.Minute), Event: "protocols/MCP", Surface: "mcp", Direction: "outbound", Decision: "allow",
			Input: json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)},
		{ID: "hook", Time: now.Add(-10 * time.Minute), Event: "tool.pre_call", Surface: "hooks", Tool: "bash", Decision: "deny", PolicyID: "no-rm"},
	} {
		r.Results = []warden.Result{}
		if r.Input == nil {
			r.Input = json.RawMessage(`{}`)
		}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := cli(t, "", "runs", "--data", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "TIME SURFACE DIRECTION EVENT METHOD/TOOL DECISION POLICY REASON SESSION LATENCY" {
		t.Errorf("header %q", lines[0])
	}
	for i, want := range [][]string{
		{"hooks", "-", "tool.pre_call", "bash", "deny", "no-rm"},
		{"mcp", "outbound", "protocols/MCP", "tools/list", "allow", "-"}, // no tool: the method
		{"mcp", "outbound", "protocols/MCP", "send_email", "deny", "no-external-email"},
		{"aos", "-", "steps/toolCallRequest", "bash", "allow", "-"},
	} {
		if got := strings.Fields(lines[i+1])[1:7]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--surface", "mcp"}, []string{"mcp-list", "mcp-call"}},
		{[]string{"--tool", "bash"}, []string{"hook", "old"}},
		{[]string{"--policy", "no-external-email"}, []string{"mcp-call"}},
		{[]string{"--since", "1h"}, []string{"hook", "mcp-list", "mcp-call"}},
		{[]string{"--since", now.Add(-25 * time.Minute).Format(time.RFC3339Nano), "--decision", "allow"}, []string{"mcp-list"}},
		{[]string{"--surface", "sdk"}, []string{}},
	} {
		code, out, errOut := cli(t, "", append([]string{"runs", "--data", dir, "-o", "json"}, tt.args...)...)
		var recs []audit.Record
		if err := json.Unmarshal([]byte(out), &recs); code != exitOK || err != nil {
			t.Fatalf("%v: exit %d %v %s", tt.args, code, err, errOut)
		}
		got := []string{}
		for _, r := range recs {
			got = append(got, r.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%v: %v, want %v", tt.args, got, tt.want)
		}
	}
	for _, args := range [][]string{
		{"--surface", "web"},
		{"--since", "yesterday"},
		{"--since", "-1h"},
		{"--after", "hook", "--follow"},
	} {
		code, _, errOut := cli(t, "", append([]string{"runs", "--data", dir}, args...)...)
		if code != exitError || !strings.Contains(errOut, args[0]+":") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// --follow prints the newest records, then those recorded while it runs by
// a writer it shares the trace with, filtered, until interrupted.
func TestRunsFollow(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var denies []string
	rec := func(id, decision string) {
		t.Helper()
		if decision == "deny" {
			denies = append(denies, id)
		}
		r := &audit.Record{ID: id, Time: time.Now(), Event: "steps/toolCallRequest", Surface: "aos", Tool: "bash",
			Decision: decision, Reason: id, Results: []warden.Result{}, Input: json.RawMessage(`{}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		rec(fmt.Sprintf("before-%d", i), []string{"deny", "allow"}[i%2])
	}
	defer func(p time.Duration, f func() (context.Context, context.CancelFunc)) { followPoll, interrupted = p, f }(followPoll, interrupted)
	followPoll = 10 * time.Millisecond
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			ctx, stop := context.WithCancel(context.Background())
			interrupted = func() (context.Context, context.CancelFunc) { return ctx, stop }
			var out, errOut buftest.Buffer
			code := make(chan int, 1)
			go func() {
				code <- run([]string{"runs", "--data", dir, "--follow", "--decision", "deny", "--last", "2", "-o", format}, nil, &out, &errOut)
			}()
			waitFor := func(id string) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(out.String(), id) {
					if time.Now().After(deadline) {
						t.Fatalf("%s not printed:\n%s%s", id, out.String(), errOut.String())
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			listed := denies[len(denies)-2:]
			waitFor(listed[1])
			for i := range 6 {
				rec(fmt.Sprintf("%s-during-%d", format, i), []string{"deny", "allow"}[i%2])
			}
			waitFor(format + "-during-4")
			stop()
			select {
			case c := <-code:
				if c != exitOK {
					t.Fatalf("exit %d: %s", c, errOut.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("--follow did not stop when interrupted")
			}
			got := out.String()
			var order []string
			for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
				if format == "json" {
					var r audit.Record
					if err := json.Unmarshal([]byte(l), &r); err != nil {
						t.Fatalf("not a JSON line: %q", l)
					}
					order = append(order, r.ID)
				} else if !strings.HasPrefix(l, "TIME") {
					order = append(order, strings.Fields(l)[7]) // the reason: the id
				}
			}
			want := append(slices.Clone(listed), format+"-during-0", format+"-during-2", format+"-during-4")
			if strings.Join(order, ",") != strings.Join(want, ",") {
				t.Errorf("printed %v, want %v (oldest first, denies only, once each):\n%s", order, want, got)
			}
			if format == "table" && strings.Count(got, "TIME") != 1 {
				t.Errorf("want one header:\n%s", got)
			}
		})
	}
}
