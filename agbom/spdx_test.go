package agbom_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agbom"

	spdx3 "github.com/spdx/tools-golang/spdx/v3/v3_0"
)

// No npm package ships the SPDX 3.0 JSON schema, and the Go module proxy
// serves no module that embeds it (spdx.org, where it is published, is not
// reachable from the build machines). The next best official check is the
// SPDX project's own Go tools: github.com/spdx/tools-golang's spdx/v3/v3_0
// is generated from the SPDX 3.0.1 model; reading a document with it
// refuses unknown classes, properties' unknown vocabulary values and
// dangling references, and Validate checks every class's required
// properties (the model's SHACL minCount constraints).
func validateSPDX(t *testing.T, b []byte) error {
	t.Helper()
	var d spdx3.Document
	if err := d.FromJSON(bytes.NewReader(b)); err != nil {
		return err
	}
	return d.Validate(false)
}

func TestSPDXValidates(t *testing.T) {
	for name, d := range map[string]*agbom.Document{"sample": sample(t), "empty": {Agent: "nobody"}} {
		b, err := agbom.SPDX(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateSPDX(t, b); err != nil {
			t.Errorf("%s: the SPDX output does not read and validate with spdx/tools-golang v3: %v", name, err)
		}
	}
}

// TestSPDXValidatorCatches: the check does refuse broken documents.
func TestSPDXValidatorCatches(t *testing.T) {
	good, err := agbom.SPDX(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(graph []map[string]any)
	}{
		{"no specVersion", func(g []map[string]any) { delete(g[0], "specVersion") }},
		{"no createdBy", func(g []map[string]any) { delete(g[0], "createdBy") }},
		{"bad created", func(g []map[string]any) { g[0]["created"] = "yesterday" }},
		{"unknown purpose", func(g []map[string]any) { g[3]["software_primaryPurpose"] = "bogus" }},
		{"unknown class", func(g []map[string]any) { g[3]["type"] = "Service" }},
		{"unknown relationship", func(g []map[string]any) {
			for _, e := range g {
				if e["type"] == "Relationship" {
					e["relationshipType"] = "exposes"
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc struct {
				Context string           `json:"@context"`
				Graph   []map[string]any `json:"@graph"`
			}
			if err := json.Unmarshal(good, &doc); err != nil {
				t.Fatal(err)
			}
			tc.edit(doc.Graph)
			b, _ := json.Marshal(map[string]any{"@context": doc.Context, "@graph": doc.Graph})
			if err := validateSPDX(t, b); err == nil {
				t.Fatal("a broken document validated")
			} else if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
		})
	}
}
