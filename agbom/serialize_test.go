package agbom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var at = time.Date(2026, 11, 25, 10, 30, 0, 0, time.UTC)

// sample is the AgBOM of testdata/snapshot.json plus two tools the MCP
// gateway saw (one pinned, one changed), read back from a store.
func sample(t testing.TB) *agbom.Document {
	t.Helper()
	raw, err := os.ReadFile("testdata/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	u, err := agbom.FromACS(catalog.MethodAgBOMSnapshot, "", "finance-agent", payload, at)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	ctx := context.Background()
	if err := st.UpdateAgBOM(ctx, u); err != nil {
		t.Fatal(err)
	}
	obs := agbom.MCPObservation("everything", "http://127.0.0.1:3001/mcp", []warden.ToolDef{
		{Name: "echo", Description: "Echoes back the input", Hash: "aa"},
		{Name: "add", Description: "Adds two numbers", Hash: "bb"},
	}, map[string]string{"echo": "aa", "add": "b0"}, nil)
	obs.Agent, obs.At = "finance-agent", at.Add(time.Minute)
	if err := st.UpdateAgBOM(ctx, obs); err != nil {
		t.Fatal(err)
	}
	cs, err := st.AgBOM(ctx, "", "finance-agent")
	if err != nil {
		t.Fatal(err)
	}
	d, err := agbom.FromStored("", "finance-agent", cs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(*agbom.Document) ([]byte, error)
	}{{"agbom.cdx.json", agbom.CycloneDX}, {"agbom.spdx.json", agbom.SPDX}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.fn(sample(t))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := tc.fn(sample(t))
			if !bytes.Equal(a, b) {
				t.Fatal("two serializations of one AgBOM differ")
			}
			golden(t, tc.name, a)
		})
	}
}
