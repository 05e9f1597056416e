package hostadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/hostadapter"
	"github.com/wardenhq/warden/server"
)

// stub decides every step the same way.
type stub struct {
	a   hostadapter.Answer
	err error
}

func (s stub) Check(context.Context, *hostadapter.Step) (hostadapter.Answer, error) {
	return s.a, s.err
}

const preToolUse = `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`

func TestFailClosed(t *testing.T) {
	down := stub{err: errors.New("dial tcp 127.0.0.1:1: connection refused")}
	cases := []struct {
		name       string
		host       hostadapter.Host
		d          hostadapter.Checker
		in         string
		failOpen   bool
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{"bad JSON", hostadapter.ClaudeCode, down, `{"session_id":`, false, 2, "", "warden: bad hook input: not valid JSON: unexpected end of input (the JSON is cut short)"},
		{"empty stdin", hostadapter.Cursor, down, "", false, 2, "", "warden: bad hook input: no hook payload on stdin (the host writes its hook JSON there)"},
		{"not an object", hostadapter.Gemini, down, `[1]`, false, 2, "", "warden: bad hook input: the hook payload is an array, not a JSON object"},
		{"duplicate key", hostadapter.Codex, down, `{"tool_name":"a","tool_name":"b"}`, false, 2, "", `warden: bad hook input: duplicate key "tool_name" at the top level`},
		{"two values", hostadapter.ClaudeCode, down, `{} {}`, false, 2, "", "warden: bad hook input: more than one JSON value on stdin"},
		{"no event name", hostadapter.ClaudeCode, down, `{"session_id":"s1"}`, false, 2, "", "warden: claude-code hook input: hook_event_name: required"},
		{"no session", hostadapter.ClaudeCode, down, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`, false, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"claude-code hook input: session_id: required, the host's session id"}}` + "\n",
			"warden: claude-code hook input: session_id: required, the host's session id"},
		{"tool_input not an object", hostadapter.Gemini, down, `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"x","tool_input":"ls"}`, false, 0,
			`{"decision":"deny","reason":"gemini hook input: tool_input: must be an object"}` + "\n", "warden: gemini hook input: tool_input: must be an object"},
		{"guardian down, gate", hostadapter.ClaudeCode, down, preToolUse, false, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"warden could not decide: dial tcp 127.0.0.1:1: connection refused"}}` + "\n",
			"warden: warden could not decide: dial tcp 127.0.0.1:1: connection refused"},
		{"guardian down, prompt gate (cursor)", hostadapter.Cursor, down, `{"session_id":"s","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`, false, 2,
			`{"continue":false,"user_message":"warden could not decide: dial tcp 127.0.0.1:1: connection refused"}` + "\n",
			"warden could not decide: dial tcp 127.0.0.1:1: connection refused"},
		{"guardian down, observed event", hostadapter.ClaudeCode, down, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`, false, 1, "",
			"warden: warden could not decide: dial tcp 127.0.0.1:1: connection refused"},
		{"guardian down, --fail-open", hostadapter.ClaudeCode, down, preToolUse, true, 1, "",
			"warden: warden could not decide: dial tcp 127.0.0.1:1: connection refused (--fail-open: proceeding)"},
		{"guardian down, --fail-open (cursor)", hostadapter.Cursor, down, `{"session_id":"s","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{}}`, true, 1, "{}\n",
			"warden: warden could not decide: dial tcp 127.0.0.1:1: connection refused (--fail-open: proceeding)"},
		{"unmapped event needs no guardian", hostadapter.ClaudeCode, down, `{"session_id":"s","hook_event_name":"PermissionRequest"}`, false, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := hostadapter.Run(context.Background(), c.host, c.d, strings.NewReader(c.in), hostadapter.Options{FailOpen: c.failOpen})
			if o.Exit != c.wantExit || string(o.Stdout) != c.wantStdout || o.Stderr != c.wantStderr {
				t.Errorf("got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", o.Exit, o.Stdout, o.Stderr, c.wantExit, c.wantStdout, c.wantStderr)
			}
		})
	}
}

func TestOversizedInput(t *testing.T) {
	in := `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("a", hostadapter.MaxInput) + `"}`
	o := hostadapter.Run(context.Background(), hostadapter.ClaudeCode, stub{a: hostadapter.Answer{Decision: "allow"}}, strings.NewReader(in), hostadapter.Options{})
	if o.Exit != 2 || !strings.Contains(o.Stderr, "exceeds 4194304 bytes") {
		t.Errorf("got exit %d stderr %q", o.Exit, o.Stderr)
	}
}

// TestServerTimeout: a warden that does not answer is a deny within the
// timeout, not a hung hook.
func TestServerTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}}
	start := time.Now()
	o := hostadapter.Run(context.Background(), hostadapter.ClaudeCode, c, strings.NewReader(preToolUse), hostadapter.Options{Timeout: 200 * time.Millisecond})
	took := time.Since(start)
	if took > 2*time.Second {
		t.Errorf("took %s", took)
	}
	if !strings.Contains(string(o.Stdout), `"permissionDecision":"deny"`) || !strings.Contains(o.Stderr, "context deadline exceeded") {
		t.Errorf("got %q %q", o.Stdout, o.Stderr)
	}
	t.Logf("unanswered warden: denied after %s (timeout 200ms)", took.Round(time.Millisecond))
}

// TestServerUnreachable: nothing listens.
func TestServerUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := &hostadapter.Client{T: &hostadapter.HTTP{URL: url + "/acs"}}
	o := hostadapter.Run(context.Background(), hostadapter.Gemini, c,
		strings.NewReader(`{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`), hostadapter.Options{})
	if o.Exit != 0 || !strings.HasPrefix(string(o.Stdout), `{"decision":"deny","reason":"warden could not decide: Post`) {
		t.Errorf("got exit %d %q %q", o.Exit, o.Stdout, o.Stderr)
	}
}

// TestServerRefusesToken: a 401 without a JSON-RPC body is a deny naming
// the status.
func TestServerRefusesToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	c := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs", Token: "nope"}}
	o := hostadapter.Run(context.Background(), hostadapter.Codex, c, strings.NewReader(preToolUse), hostadapter.Options{})
	if !strings.Contains(string(o.Stdout), `"permissionDecision":"deny"`) || !strings.Contains(o.Stderr, "401 Unauthorized") {
		t.Errorf("got %q %q", o.Stdout, o.Stderr)
	}
}

// TestBadGuardianAnswer: an answer the adapter cannot read is a deny.
func TestBadGuardianAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":         `<html>`,
		"unknown decision": `{"jsonrpc":"2.0","id":"X","result":{"decision":"maybe"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := &hostadapter.Client{T: hostadapter.HandlerFunc(func(_ context.Context, b []byte) []byte {
				var req struct{ ID string }
				json.Unmarshal(b, &req)
				return bytes.ReplaceAll([]byte(body), []byte(`"X"`), []byte(`"`+req.ID+`"`))
			})}
			o := hostadapter.Run(context.Background(), hostadapter.ClaudeCode, c, strings.NewReader(preToolUse), hostadapter.Options{})
			if !strings.Contains(string(o.Stdout), `"permissionDecision":"deny"`) {
				t.Errorf("got %q %q", o.Stdout, o.Stderr)
			}
		})
	}
}

// FuzzRun feeds arbitrary stdin to every host's decoder and mapper: no
// panic, an exit code the hosts know, and stdout empty or one JSON value.
func FuzzRun(f *testing.F) {
	for _, s := range []string{preToolUse, `{}`, `{"hook_event_name":"BeforeTool"}`, `[`, `{"session_id":"s","hook_event_name":"beforeMCPExecution","tool_name":"t","tool_input":"{\"a\":1}"}`,
		`{"session_id":"s","hook_event_name":"postToolUse","tool_name":"t","tool_output":"[1,2"}`, `{"session_id":1,"hook_event_name":"Stop","turn_id":2}`} {
		f.Add([]byte(s))
	}
	answers := []hostadapter.Answer{{Decision: "allow"}, {Decision: "deny", Reason: "r"}, {Decision: "ask"},
		{Decision: "modify", Payload: map[string]any{"arguments": map[string]any{"command": map[string]any{"value": "x"}}}}, {Decision: "modify"}}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, h := range hostadapter.Hosts {
			for _, a := range answers {
				o := hostadapter.Run(context.Background(), h, stub{a: a}, bytes.NewReader(in), hostadapter.Options{})
				if o.Exit < 0 || o.Exit > 2 {
					t.Fatalf("%s: exit %d", h.Name(), o.Exit)
				}
				if len(o.Stdout) > 0 && !json.Valid(o.Stdout) {
					t.Fatalf("%s: stdout %q is not JSON", h.Name(), o.Stdout)
				}
			}
		}
	})
}

// TestSignatures: a warden that requires signed ACS requests decides a
// client with the key and refuses one without it (the host's deny).
func TestSignatures(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	store := newStore(t)
	gd := openGuardian(t, store, "allow")
	h, err := acs.NewHandler(gd, acs.Options{Sessions: store, Keys: map[string][]byte{"k1": key}, RequireSignatures: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Routes: []server.Route{acs.Route(h)}}))
	defer srv.Close()
	signed := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}, KeyID: "k1", Key: key}
	o := hostadapter.Run(context.Background(), hostadapter.ClaudeCode, signed, strings.NewReader(preToolUse), hostadapter.Options{})
	if string(o.Stdout) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`+"\n" {
		t.Errorf("signed: %q %q", o.Stdout, o.Stderr)
	}
	unsigned := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}}
	o = hostadapter.Run(context.Background(), hostadapter.ClaudeCode, unsigned, strings.NewReader(strings.Replace(preToolUse, "s1", "s2", 1)), hostadapter.Options{})
	if !strings.Contains(string(o.Stdout), `"permissionDecision":"deny"`) || !strings.Contains(o.Stderr, "-32004") {
		t.Errorf("unsigned: %q %q", o.Stdout, o.Stderr)
	}
	wrong := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}, KeyID: "k1", Key: []byte("another key of thirty-two bytes!")}
	o = hostadapter.Run(context.Background(), hostadapter.ClaudeCode, wrong, strings.NewReader(strings.Replace(preToolUse, "s1", "s3", 1)), hostadapter.Options{})
	if !strings.Contains(string(o.Stdout), `"permissionDecision":"deny"`) {
		t.Errorf("wrong key: %q %q", o.Stdout, o.Stderr)
	}
}
