package hostadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/hostadapter"
	"github.com/wardenhq/warden/server"
)

// TestNoPolicyMatchedIsNoOpinion (docs/security.md: installing warden must
// not auto-approve unmatched tool calls): with a policy set that matches
// nothing and defaultDecision allow, every hook payload of every host —
// in-process and through a running warden's POST /acs — is answered with
// no decision: nothing on stdout (Claude Code, Codex) or {} (Cursor, Gemini
// CLI, whose hooks answer JSON), exit 0. Never the host's allow, which in
// Claude Code and Cursor skips the user's own permission prompt.
func TestNoPolicyMatchedIsNoOpinion(t *testing.T) {
	h, _ := guardianFor(t, "default")
	srv := httptest.NewServer(server.New(server.Options{Routes: []server.Route{acs.Route(h)}}))
	defer srv.Close()
	deciders := map[string]hostadapter.Checker{
		"in-process": inProcess(h),
		"--server":   &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}},
	}
	n := 0
	for _, name := range sortedHosts() {
		files, _ := filepath.Glob(filepath.Join("testdata", name, "*.json"))
		shared, _ := filepath.Glob(filepath.Join("testdata", name, "secret", "*.json"))
		for _, f := range append(files, shared...) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for how, d := range deciders {
				if how == "--server" {
					in = bytes.ReplaceAll(in, []byte(`"6f1c2d3e-`), []byte(`"8f1c2d3e-`))
				}
				got := run(t, hostadapter.Hosts[name], d, in)
				n++
				if got.Exit != 0 || got.Stderr != "" || got.Stdout != "" && got.Stdout != "{}\n" {
					t.Errorf("%s %s (%s): %+v, want no decision", name, f, how, got)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d answers checked", n)
	}
}

// TestExplicitAllow: what makes an allow the host's allow is read from
// the ACS result itself — reason_codes naming default_decision, or
// policy_data.warden.decided differing from the answer (a modify that
// changed nothing) — so the in-process Guardian and POST /acs agree. Only
// a policy's allow is Claude Code's permissionDecision allow.
func TestExplicitAllow(t *testing.T) {
	cases := []struct {
		name   string
		result string
		want   string
	}{
		{"default decision", `{"decision":"allow","reasoning":"no policy matched; default decision allow","reason_codes":["default_decision"]}`, ""},
		{"modify that changed nothing", `{"decision":"allow","reasoning":"r","reason_codes":["p1"],"policy_data":{"warden":{"decided":"modify"}}}`, ""},
		{"a policy's allow", `{"decision":"allow","reasoning":"ok","reason_codes":["p1"],"policy_references":[{"policy_id":"p1"}]}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}` + "\n"},
		{"a policy's allow without reason codes", `{"decision":"allow"}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}` + "\n"},
		{"default deny", `{"decision":"deny","reasoning":"no policy matched; default decision deny","reason_codes":["default_decision"]}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no policy matched; default decision deny"}}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &hostadapter.Client{T: hostadapter.HandlerFunc(func(_ context.Context, b []byte) []byte {
				var req struct{ ID string }
				json.Unmarshal(b, &req)
				return []byte(`{"jsonrpc":"2.0","id":"` + req.ID + `","result":` + c.result + `}`)
			})}
			o := hostadapter.Run(context.Background(), hostadapter.ClaudeCode, cl, strings.NewReader(preToolUse), hostadapter.Options{})
			if o.Exit != 0 || string(o.Stdout) != c.want {
				t.Errorf("got exit %d %q, want %q", o.Exit, o.Stdout, c.want)
			}
			// Codex: an allow is always silence.
			o = hostadapter.Run(context.Background(), hostadapter.Codex, cl, strings.NewReader(preToolUse), hostadapter.Options{})
			if strings.Contains(string(o.Stdout), `"allow"`) {
				t.Errorf("codex: %q", o.Stdout)
			}
		})
	}
}
