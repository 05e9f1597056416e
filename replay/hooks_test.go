package replay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/sqlite"
)

// Two command hooks, each creating its marker file when it runs: rewrite
// turns a shell command into `ls` before the policies see it (the policy
// step is placed after it); gate denies every bash call after them. A
// webhook between them counts its calls.
const hookConfig = `trace: {raw_input: true}
hooks:
  - name: rewrite
    events: ["tool.pre_call"]
    when: 'tool.name == "shell"'
    command: ["$D/rewrite.sh", "$D/rewrite.ran"]
  - name: policies
    events: ["tool.pre_call"]
    policy: {}
    priority: 10
  - name: count
    events: ["tool.pre_call"]
    priority: 15
    webhook: {url: "$URL"}
  - name: gate
    events: ["tool.pre_call"]
    when: 'tool.name == "bash"'
    priority: 20
    command: ["$D/gate.sh", "$D/gate.ran"]
`

const denyRM = `id: deny-rm
version: "1"
events: ["tool.pre_call"]
when: 'string(tool.args.command).contains("rm -rf")'
decision: deny
reason: destructive command
`

func script(t *testing.T, dir, name, answer string) {
	t.Helper()
	body := "#!/bin/sh\ncat >/dev/null\n: >\"$1\"\nprintf '%s\\n' '" + answer + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
}

func preCall(tool, command string) *warden.Event {
	return &warden.Event{Name: "tool.pre_call", Surface: warden.SurfaceHooks, Payload: map[string]any{
		"event": "tool.pre_call", "session_id": "h1", "tool_name": tool, "tool_input": map[string]any{"command": command}}}
}

// TestReplayRunsNoHook records decisions with two command hooks live, then
// replays them with the hooks' markers deleted: no marker comes back, and
// the recorded hook results decide as they did — gate's deny stands though
// no policy denies, and rewrite's recorded patch is applied before the
// policy step again, which therefore does not see the rm -rf it removed.
func TestReplayRunsNoHook(t *testing.T) {
	d := t.TempDir()
	script(t, d, "rewrite.sh", `{"tool_input": {"command": "ls"}}`)
	script(t, d, "gate.sh", `{"deny": true, "deny_reason": "gate says no"}`)
	cfgFile := filepath.Join(d, "warden.yaml")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	src := strings.NewReplacer("$D", d, "$URL", srv.URL).Replace(hookConfig)
	if err := os.WriteFile(cfgFile, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	pol := policyDir(t, denyRM)
	data := t.TempDir()
	g, err := guardian.Open(guardian.Options{Config: cfg, Policies: []string{pol}, NoBuiltin: true, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*warden.Event{preCall("shell", "rm -rf /"), preCall("bash", "echo hi"), preCall("python", "rm -rf /")} {
		if _, err := g.Decide(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	g.Close(context.Background())
	live := calls.Load()
	if live == 0 {
		t.Fatal("the webhook was not called live")
	}
	for _, m := range []string{"rewrite.ran", "gate.ran"} {
		if err := os.Remove(filepath.Join(d, m)); err != nil {
			t.Fatalf("the %s hook did not run live: %v", m, err)
		}
	}

	st, err := sqlite.OpenReadOnly(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := audit.Collect(context.Background(), st, audit.Query{Oldest: true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		policies string // the candidate set (no pack)
		want     []string
	}{
		{"same policies", denyRM, []string{"modify", "deny", "deny"}},
		{"no policies", "", []string{"modify", "deny", "allow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			if tt.policies != "" {
				paths = []string{policyDir(t, tt.policies)}
			}
			r, err := replay.Open(guardian.Options{ConfigFile: cfgFile, Policies: paths, NoBuiltin: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, rec := range recs {
				out, err := r.Replay(context.Background(), &rec)
				if err != nil {
					t.Fatal(err)
				}
				if out.Verdict.String() != tt.want[i] {
					t.Errorf("%s: %s, want %s (%+v)", rec.Input, out.Verdict, tt.want[i], out.Results)
				}
			}
			gate, _ := r.Replay(context.Background(), &recs[1])
			if gate.Reason != "gate says no" || gate.Results[len(gate.Results)-1].Kind != "command" {
				t.Errorf("the bash call is not denied by gate's recorded result: %q %+v", gate.Reason, gate.Results)
			}
			rep, err := r.Run(context.Background(), st, audit.Query{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Summary.Replayed != 3 {
				t.Errorf("replayed %d", rep.Summary.Replayed)
			}
			// The python call was denied before gate's turn; allowed now, it
			// would have reached gate (whose when may or may not hold).
			if tt.policies == "" && (len(rep.Changed) != 1 || !slices.ContainsFunc(rep.Changed[0].Notes, func(n string) bool {
				return strings.Contains(n, "before hooks count, gate: replayed without them")
			})) {
				t.Errorf("changed %+v, want the python call noted for hook gate", rep.Changed)
			}
		})
	}
	for _, m := range []string{"rewrite.ran", "gate.ran"} {
		if _, err := os.Stat(filepath.Join(d, m)); !os.IsNotExist(err) {
			t.Errorf("a hook ran during the replay: %s exists (%v)", m, err)
		}
	}
	if n := calls.Load(); n != live {
		t.Errorf("the webhook was called %d times during the replay", n-live)
	}
}
