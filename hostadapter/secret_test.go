package hostadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hostadapter"
)

// awsKey is AWS's documented example access key id, which the built-in
// pack's secrets detector finds.
const awsKey = "AKIAIOSFODNN7EXAMPLE"

// TestGoldenSecret: a tool output carrying an AWS access key, in each
// host's documented after-tool payload (testdata/<host>/secret/*.json),
// decided by the built-in pack alone (redact-secrets-in-tool-results, a
// modify). The answer is compared with testdata/<host>/secret/*.golden;
// the key is in no answer, and the step is recorded as the pack's modify
// whatever the host can do with it: Claude Code replaces the output
// (updatedToolOutput, updatedMCPToolOutput), Gemini CLI hides it (deny),
// Codex and Cursor's postToolUse can only tell the model (a block, added
// context), and Cursor's afterShellExecution is observed.
func TestGoldenSecret(t *testing.T) {
	store := newStore(t)
	gd, err := guardian.Open(guardian.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gd.Close(context.Background()) })
	h, err := acs.NewHandler(gd, acs.Options{Sessions: store, Approvals: gd.Approvals() != nil, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	d := inProcess(h)
	seen := 0
	for _, name := range sortedHosts() {
		files, _ := filepath.Glob(filepath.Join("testdata", name, "secret", "*.json"))
		if len(files) == 0 {
			t.Fatalf("no secret payloads for %s", name)
		}
		for _, f := range files {
			seen++
			t.Run(name+"/"+strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(in), awsKey) {
					t.Fatalf("%s does not carry the key", f)
				}
				got := run(t, hostadapter.Hosts[name], d, in)
				if strings.Contains(got.Stdout+got.Stderr, awsKey) {
					t.Errorf("the key is in the answer: %+v", got)
				}
				if got.Stdout == "" || got.Stdout == "{}\n" {
					if name != "cursor" || !strings.HasPrefix(filepath.Base(f), "after") {
						t.Errorf("no answer to a tool output carrying a secret: %+v", got)
					}
				}
				checkGolden(t, strings.TrimSuffix(f, ".json")+".golden", map[string]result{"builtin": got})
			})
		}
	}
	recs, err := audit.Collect(context.Background(), store, audit.Query{Event: "steps/toolCallResult"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != seen {
		t.Fatalf("%d tool results recorded, want %d", len(recs), seen)
	}
	for _, r := range recs {
		if r.Decision != "modify" || r.PolicyID != "redact-secrets-in-tool-results" {
			t.Errorf("%s %s: recorded %s by %q, want modify by redact-secrets-in-tool-results", r.AgentID, r.Tool, r.Decision, r.PolicyID)
		}
	}
}
