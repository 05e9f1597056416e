package agbom_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agbom"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// cdxSchemaDir is where the npm package @cyclonedx/cyclonedx-library
// (pinned in e2e/node/package.json) keeps the official CycloneDX schemas.
const cdxSchemaDir = "../e2e/node/node_modules/@cyclonedx/cyclonedx-library/res/schema"

// cdxLoader serves http://cyclonedx.org/schema/NAME from the package's
// NAME or its .SNAPSHOT. form, and nothing else (no network).
type cdxLoader struct{ dir string }

func (l cdxLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, "http://cyclonedx.org/schema/")
	if !ok {
		return nil, fmt.Errorf("no network: %s", url)
	}
	for _, n := range []string{name, strings.Replace(name, ".schema.json", ".SNAPSHOT.schema.json", 1)} {
		b, err := os.ReadFile(filepath.Join(l.dir, n))
		if err == nil {
			return jsonschema.UnmarshalJSON(bytes.NewReader(b))
		}
	}
	return nil, fmt.Errorf("%s: not in %s", url, l.dir)
}

// TestCycloneDXSchema validates the golden AgBOM, and an empty one,
// against the official CycloneDX 1.6 JSON schema (with its spdx and jsf
// schemas), as @cyclonedx/cyclonedx-library ships them. It runs when
// WARDEN_E2E_NODE is set (.ci/run installs e2e/node).
func TestCycloneDXSchema(t *testing.T) {
	if os.Getenv("WARDEN_E2E_NODE") == "" {
		t.Skip("WARDEN_E2E_NODE not set (the schema comes from e2e/node's npm packages)")
	}
	if _, err := os.Stat(filepath.Join(cdxSchemaDir, "bom-1.6.SNAPSHOT.schema.json")); err != nil {
		t.Fatalf("the CycloneDX schema is missing (npm ci --prefix e2e/node): %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(cdxLoader{cdxSchemaDir})
	c.AssertFormat()
	sch, err := c.Compile("http://cyclonedx.org/schema/bom-1.6.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*agbom.Document{"sample": sample(t), "empty": {Agent: "nobody"}} {
		out, err := agbom.CycloneDX(d)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the CycloneDX output does not validate against bom-1.6.schema.json:\n%v", name, err)
		}
	}
	// The schema does catch a broken BOM.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"bomFormat":"CycloneDX","specVersion":"1.6","components":[{"type":"service","name":"x"}]}`))
	if sch.Validate(bad) == nil {
		t.Error("a component of type service validated")
	}
}
