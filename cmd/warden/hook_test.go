package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestHookRecordsSession: `warden hook HOST` decides in-process and records
// the step under the host's session id, which `warden runs --session`
// finds, with the host as the agent.
func TestHookRecordsSession(t *testing.T) {
	data := t.TempDir()
	pol := filepath.Join(t.TempDir(), "no-rm.yaml")
	os.WriteFile(pol, []byte(`id: no-rm
version: "1"
events: ["steps/toolCallRequest"]
when: 'tool.name == "Bash" && string(tool.args.command).startsWith("rm ")'
decision: deny
reason: no rm
`), 0o644)
	const session = "a1b2c3d4-0000-4000-8000-000000000042"
	in := `{"session_id":"` + session + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"cwd":"/tmp"}`
	out, errs, code := runCmd(t, in, "hook", "claude-code", "--data", data, "--builtin=false", "--policy", pol)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}` + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	// A second process on the same data directory: the session is known.
	// No policy matches `ls`: no opinion, so no output (Claude Code's own
	// permission flow decides), but the step is recorded.
	out, errs, code = runCmd(t, strings.Replace(in, "rm -rf build", "ls", 1), "hook", "claude-code", "--data", data, "--builtin=false", "--policy", pol)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("second call: exit %d stdout %q stderr %q", code, out, errs)
	}
	runs, errs, code := runCmd(t, "", "runs", "--data", data, "--session", session, "-o", "json")
	if code != 0 {
		t.Fatalf("runs: %d %s", code, errs)
	}
	for _, w := range []string{`"session_id":"` + session + `"`, `"decision":"deny"`, `"decision":"allow"`, `"steps/toolCallRequest"`, `"claude-code"`} {
		if !strings.Contains(strings.ReplaceAll(runs, `": "`, `":"`), w) {
			t.Errorf("runs --session lacks %s:\n%s", w, runs)
		}
	}
}

// TestHookFailsClosed: a config that does not load is the host's deny,
// one line, no stack trace.
func TestHookFailsClosed(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("defaultDecision: [\n"), 0o644)
	in := `{"session_id":"s","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls"}}`
	out, errs, code := runCmd(t, in, "hook", "cursor", "--config", bad, "--data", t.TempDir())
	if code != 0 || !strings.HasPrefix(out, `{"agent_message":"warden could not decide: `) || !strings.Contains(out, `"permission":"deny"`) {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Contains(errs, "goroutine") {
		t.Errorf("stderr is not one line: %q", errs)
	}
	// An unreachable --server: the host's deny.
	out, _, code = runCmd(t, `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"x","tool_input":{}}`,
		"hook", "gemini", "--server", "http://127.0.0.1:1", "--timeout", "2s")
	if code != 0 || !strings.HasPrefix(out, `{"decision":"deny","reason":"warden could not decide:`) {
		t.Errorf("unreachable server: exit %d %s", code, out)
	}
	// A bad flag: exit 2 (every host reads it as a block).
	_, errs, code = runCmd(t, "{}", "hook", "codex", "--nope")
	if code != 2 || !strings.Contains(errs, "bad flags") {
		t.Errorf("bad flag: exit %d %s", code, errs)
	}
	_, errs, code = runCmd(t, "{}", "hook", "claude-code", "--server", "http://127.0.0.1:1", "--policy", "p.yaml")
	if code != 2 || !strings.Contains(errs, "--policy decide in-process only; with --server the server's policies and trace decide") {
		t.Errorf("--policy with --server: exit %d %s", code, errs)
	}
	_, errs, code = runCmd(t, "{}", "hook", "vscode")
	if code != 1 || !strings.Contains(errs, `unknown host "vscode" (want one of claude-code, codex, cursor, gemini)`) {
		t.Errorf("unknown host: exit %d %s", code, errs)
	}
}

// TestHookSigned: with acs.keys (signatures then required) the hook signs
// its requests with the config's key and verifies the answers.
func TestHookSigned(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "warden.yaml")
	os.WriteFile(cfg, []byte("acs:\n  keys:\n    default: \"hex:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"\n"), 0o644)
	in := `{"session_id":"signed-1","hook_event_name":"UserPromptSubmit","prompt":"hello"}`
	data := t.TempDir()
	out, errs, code := runCmd(t, in, "hook", "claude-code", "--config", cfg, "--data", data)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("signed: exit %d %q %q", code, out, errs)
	}
}
