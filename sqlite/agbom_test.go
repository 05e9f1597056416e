package sqlite

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden/storetest"
)

func TestAgBOM(t *testing.T) {
	storetest.RunAgBOM(t, func(t *testing.T) agbom.Store {
		return open(t, t.TempDir(), Options{})
	})
}

// TestAgBOMSurvivesRestart: pins and components written by one process
// are read by the next, also through a read-only store.
func TestAgBOMSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, Options{})
	if err := s.PinTools(ctx, "everything", []agbom.ToolPin{{Name: "echo", Description: "Echoes", Hash: "ab", Pinned: base}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateAgBOM(ctx, &agbom.Update{Agent: "a", Source: agbom.SourceMCP, At: base,
		Put: []agbom.StoredComponent{{ID: "urn:mcp:everything", Type: "mcp_server", Doc: json.RawMessage(`{"id":"urn:mcp:everything"}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, Options{})
	ps, err := s2.ToolPins(ctx, "everything")
	if err != nil || len(ps) != 1 || ps[0].Description != "Echoes" || ps[0].InputSchema != nil {
		t.Fatalf("pins after restart = %+v, %v", ps, err)
	}
	cs, err := s2.AgBOM(ctx, "", "a")
	if err != nil || len(cs) != 1 || cs[0].Source != agbom.SourceMCP {
		t.Fatalf("AgBOM after restart = %+v, %v", cs, err)
	}
}
