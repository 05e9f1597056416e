package main

import (
	"strings"
	"testing"
)

// TestHookBuiltinPackHosts: `warden hook HOST` with the built-in
// pack alone, fed each host's documented payload shapes. rm -rf / is asked
// where the host can ask (Claude Code's PreToolUse, Cursor's
// beforeShellExecution) and denied, naming the approval, where it cannot
// (Codex, Gemini CLI); an ordinary delete goes through as before. An AWS
// key typed into a prompt never reaches the model: the pack redacts it
// (redact-secrets-in-prompts), and since no host's prompt hook can
// rewrite a prompt, each blocks it with the reason.
func TestHookBuiltinPackHosts(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	for _, tc := range []struct {
		host, in string
		want     []string // in stdout
		exit     int
	}{
		{"claude-code", `{"session_id":"s-cc","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /","description":"clean"},"cwd":"/home/ann/demo"}`,
			[]string{`"permissionDecision":"ask"`, "recursive delete of /"}, 0},
		{"codex", `{"session_id":"s-cx","turn_id":"t1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -fr /*"},"tool_use_id":"c1","cwd":"/home/ann/demo"}`,
			[]string{`"permissionDecision":"deny"`, "approval required", "recursive delete of /*"}, 0},
		{"cursor", `{"conversation_id":"s-cu","generation_id":"g1","session_id":"s-cu","hook_event_name":"beforeShellExecution","command":"sudo rm -rf --no-preserve-root /","cwd":"/home/ann/demo"}`,
			[]string{`"permission":"ask"`, "no-preserve-root"}, 0},
		{"gemini", `{"session_id":"s-ge","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -r -f ~"},"cwd":"/home/ann/demo","timestamp":"2026-11-25T12:00:00.000Z"}`,
			[]string{`"decision":"deny"`, "approval required", "recursive delete of ~"}, 0},

		{"claude-code", `{"session_id":"s-cc","hook_event_name":"UserPromptSubmit","prompt":"deploy with ` + key + `","cwd":"/home/ann/demo"}`,
			[]string{`"decision":"block"`, "the prompt carries a secret (aws_access_key)"}, 0},
		{"codex", `{"session_id":"s-cx","turn_id":"t2","hook_event_name":"UserPromptSubmit","prompt":"deploy with ` + key + `","cwd":"/home/ann/demo"}`,
			[]string{`"decision":"block"`, "the prompt carries a secret (aws_access_key)"}, 0},
		{"cursor", `{"conversation_id":"s-cu","generation_id":"g2","session_id":"s-cu","hook_event_name":"beforeSubmitPrompt","prompt":"deploy with ` + key + `","attachments":[]}`,
			[]string{`"continue":false`, "the prompt carries a secret (aws_access_key)"}, 2},
		{"gemini", `{"session_id":"s-ge","hook_event_name":"BeforeAgent","prompt":"deploy with ` + key + `","cwd":"/home/ann/demo","timestamp":"2026-11-25T12:00:00.000Z"}`,
			[]string{`"decision":"deny"`, "the prompt carries a secret (aws_access_key)"}, 0},
	} {
		t.Run(tc.host, func(t *testing.T) {
			out, errs, code := runCmd(t, tc.in, "hook", tc.host, "--data", t.TempDir())
			if code != tc.exit || strings.Contains(out+errs, key) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Fatalf("stdout lacks %s:\n%s\nstderr %s", w, out, errs)
				}
			}
		})
	}
	// Just outside: an ordinary delete and an ordinary prompt are not the
	// pack's business (no policy matched: no deny, no ask, no block).
	for _, tc := range []struct{ host, in string }{
		{"claude-code", `{"session_id":"s-cc","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ./build"},"cwd":"/home/ann/demo"}`},
		{"codex", `{"session_id":"s-cx","turn_id":"t3","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /tmp/x"},"tool_use_id":"c3","cwd":"/home/ann/demo"}`},
		{"cursor", `{"conversation_id":"s-cu","generation_id":"g3","session_id":"s-cu","hook_event_name":"beforeShellExecution","command":"chmod 777 file","cwd":"/home/ann/demo"}`},
		{"gemini", `{"session_id":"s-ge","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"dd if=a of=b.img"},"cwd":"/home/ann/demo","timestamp":"2026-11-25T12:00:00.000Z"}`},
		{"claude-code", `{"session_id":"s-cc","hook_event_name":"UserPromptSubmit","prompt":"where do I put my AWS access key id?","cwd":"/home/ann/demo"}`},
	} {
		t.Run(tc.host+"/ordinary", func(t *testing.T) {
			out, errs, code := runCmd(t, tc.in, "hook", tc.host, "--data", t.TempDir())
			if code != 0 || strings.Contains(out, "deny") || strings.Contains(out, "ask") || strings.Contains(out, "block") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
			}
		})
	}
}
