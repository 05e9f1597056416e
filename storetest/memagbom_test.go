package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

func TestMemAgBOM(t *testing.T) {
	storetest.RunAgBOM(t, func(t *testing.T) warden.AgBOMStore {
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
	put := []warden.AgBOMComponent{{ID: "x", Type: "tool", Doc: []byte(`{"id":"x","type":"tool"}`)}}
	for i := range warden.AgBOMMaxAgents {
		if err := m.UpdateAgBOM(ctx, &warden.AgBOMUpdate{Agent: string(rune('a'+i%26)) + string(rune(i)), Put: put}); err != nil {
			t.Fatal(err)
		}
	}
	err := m.UpdateAgBOM(ctx, &warden.AgBOMUpdate{Agent: "one more", Put: put})
	if !errors.Is(err, warden.ErrAgBOMFull) {
		t.Fatalf("agent %d: err = %v, want ErrAgBOMFull", warden.AgBOMMaxAgents+1, err)
	}
	// An existing agent may still change.
	if err := m.UpdateAgBOM(ctx, &warden.AgBOMUpdate{Agent: "a\x00", Put: put}); err != nil {
		t.Fatal(err)
	}
}
