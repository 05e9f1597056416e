package mcpgate

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/policy"
)

// memStore is a trace that keeps records in memory.
type memStore struct {
	mu   sync.Mutex
	recs []warden.Record
}

func (s *memStore) Record(_ context.Context, r *warden.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

func (s *memStore) Runs(context.Context, warden.Filter) ([]warden.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]warden.Record(nil), s.recs...), nil
}

func (s *memStore) Close() error { return nil }

func (s *memStore) all() []warden.Record {
	r, _ := s.Runs(context.Background(), warden.Filter{})
	return r
}

// find returns the records whose input contains sub.
func (s *memStore) find(sub string) []warden.Record {
	var out []warden.Record
	for _, r := range s.all() {
		if strings.Contains(string(r.Input), sub) {
			out = append(out, r)
		}
	}
	return out
}

// testDecider decides with the policies of testdata/policies.
func testDecider(t testing.TB) (*warden.Decider, *memStore) {
	t.Helper()
	set, err := policy.Load("testdata/policies")
	if err != nil {
		t.Fatal(err)
	}
	eng := policy.NewEngine(set, policy.Options{})
	st := &memStore{}
	return warden.NewDecider(warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: eng}), st, nil), st
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
