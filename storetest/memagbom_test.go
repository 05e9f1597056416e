package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden/storetest"
)

func TestMemAgBOM(t *testing.T) {
	storetest.RunAgBOM(t, func(t *testing.T) agbom.Store {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	})
}

// TestMemAgBOMAgentBound fills AgBOMMaxAgents agents (too slow to repeat
// against SQLite in the contract) and checks the next one is refused.
func TestMemAgBOMAgentBound(t *testing.T) {
	m := storetest.NewMem()
	ctx := context.Background()
	put := []agbom.StoredComponent{{ID: "x", Type: "tool", Doc: []byte(`{"id":"x","type":"tool"}`)}}
	for i := range agbom.MaxAgents {
		if err := m.UpdateAgBOM(ctx, &agbom.Update{Agent: string(rune('a'+i%26)) + string(rune(i)), Put: put}); err != nil {
			t.Fatal(err)
		}
	}
	err := m.UpdateAgBOM(ctx, &agbom.Update{Agent: "one more", Put: put})
	if !errors.Is(err, agbom.ErrFull) {
		t.Fatalf("agent %d: err = %v, want ErrAgBOMFull", agbom.MaxAgents+1, err)
	}
	// An existing agent may still change.
	if err := m.UpdateAgBOM(ctx, &agbom.Update{Agent: "a\x00", Put: put}); err != nil {
		t.Fatal(err)
	}
}
