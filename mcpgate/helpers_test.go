package mcpgate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// memStore is the shared in-memory trace (storetest.Mem).
type memStore = storetest.Mem

// find returns the records whose input contains sub.
func findRecords(s *memStore, sub string) []audit.Record {
	var out []audit.Record
	for _, r := range s.Records() {
		if strings.Contains(string(r.Input), sub) {
			out = append(out, r)
		}
	}
	return out
}

// testDecider decides with the policies of testdata/policies.
func testDecider(t testing.TB) (*pipeline.Pipeline, *memStore) {
	t.Helper()
	set, err := policy.Load("testdata/policies")
	if err != nil {
		t.Fatal(err)
	}
	eng := policy.NewEngine(set, policy.Options{})
	st := storetest.NewMem()
	return pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: eng}), Views: catalog.Views, Store: st}), st
}

// textOf returns the text of a tool result's first content.
func textOf(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) == 0 {
		t.Fatalf("empty result %+v", r)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want text", r.Content[0])
	}
	return tc.Text
}

func toolNames(r *mcp.ListToolsResult) []string {
	var n []string
	for _, t := range r.Tools {
		n = append(n, t.Name)
	}
	return n
}

// checkProgress calls the test server's slow tool with a progress token
// and waits for the three progress notifications it sends to reach the
// client (progress counts them).
func checkProgress(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args map[string]any, progress *atomic.Int32) {
	t.Helper()
	p := &mcp.CallToolParams{Name: "slow", Arguments: args}
	p.SetProgressToken("tok-1")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for progress.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if progress.Load() < 3 {
		t.Fatalf("progress notifications = %d, want 3", progress.Load())
	}
}
