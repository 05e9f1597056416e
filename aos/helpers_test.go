package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/internal/sharedtest"
	"github.com/wardenhq/warden/pipeline"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// shared is sharedtest.Path: rel inside WARDEN_SHARED, or a skip.
func shared(t testing.TB, rel ...string) string { t.Helper(); return sharedtest.Path(t, rel...) }

// memStore is the shared in-memory trace (storetest.Mem).
type memStore = storetest.Mem

// fixed returns a guardian that always answers d; with Modify and no
// payload, it answers an unchanged copy of the event's payload.
func fixed(d warden.Decision) warden.Handler {
	return warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		if d.Verdict == warden.Modify && d.Payload == nil {
			d.Payload = payload.Clone(ev.Payload)
		}
		return d, nil
	})
}

// recorder captures the events the chain sees.
type recorder struct {
	mu  sync.Mutex
	evs []*warden.Event
}

func (r *recorder) Decide(_ context.Context, ev *warden.Event) (warden.Decision, error) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	return warden.Decision{Verdict: warden.Allow}, nil
}

func (r *recorder) last() *warden.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.evs) == 0 {
		return nil
	}
	return r.evs[len(r.evs)-1]
}

// newTestHandler returns an endpoint whose chain is the one guardian g.
func newTestHandler(g warden.Handler) (*Handler, *memStore) {
	st := storetest.NewMem()
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "test", Handler: g}), Views: catalog.Views, Store: st})
	h := NewHandler(d, Options{Version: "test", Logf: func(string, ...any) {}})
	h.now = func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
	return h, st
}

// example is a seed example request.
type example struct {
	name string
	body []byte
}

// loadExamples returns the seed example requests (not the Joch responses).
func loadExamples(t testing.TB) []example {
	t.Helper()
	examplesDir := shared(t, "aos", "examples")
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("seed examples not found in %s (WARDEN_SHARED): %v", examplesDir, err)
	}
	sort.Strings(files)
	var out []example
	for _, f := range files {
		if strings.HasSuffix(f, "_response.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, example{strings.TrimSuffix(filepath.Base(f), ".json"), b})
	}
	return out
}

func readExample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared(t, "aos", "examples", name+".json"))
	if err != nil {
		t.Fatalf("seed example %s: %v (WARDEN_SHARED)", name, err)
	}
	return b
}

// schemas compiles the AOS schema definitions the tests validate against.
// The schema has flaws that stop it from compiling, fixed here in memory:
// FilePart and JSONRPCErrorResponse refer to #/definitions/... (the
// definitions live under $defs), and in MCPMessage and A2AMessage a brace
// closes too late, so "required", "title", "type" and "description" sit
// inside "properties" (of the message and of its params) instead of beside it.
type schemas struct {
	request, success, ping *jsonschema.Schema
}

var (
	schemaOnce sync.Once
	schemaSet  schemas
	schemaErr  error
)

func loadSchemas(t testing.TB) schemas {
	t.Helper()
	schemaPath := shared(t, "aos", "spec", "aos_schema.json") // before Do: Skip must not run inside it
	schemaOnce.Do(func() {
		f, err := os.Open(schemaPath)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		root := doc.(map[string]any)
		defs := root["$defs"].(map[string]any)
		root["definitions"] = defs
		for _, k := range []string{"MCPMessage", "A2AMessage"} {
			def := defs[k].(map[string]any)
			liftKeywords(def)
			liftKeywords(def["properties"].(map[string]any)["params"].(map[string]any))
		}
		c := jsonschema.NewCompiler()
		const url = "file:///aos_schema.json"
		if schemaErr = c.AddResource(url, root); schemaErr != nil {
			return
		}
		compile := func(def string) *jsonschema.Schema {
			s, err := c.Compile(url + "#/$defs/" + def)
			if err != nil && schemaErr == nil {
				schemaErr = err
			}
			return s
		}
		schemaSet = schemas{compile("ASOPRequest"), compile("ASOPSuccessResponse"), compile("PingRequestSuccessResponse")}
	})
	if schemaErr != nil {
		t.Fatalf("AOS schema %s: %v", schemaPath, schemaErr)
	}
	return schemaSet
}

// liftKeywords moves keywords misplaced inside "properties" (closing brace
// too late in the schema source) up to the schema they belong to.
func liftKeywords(schema map[string]any) {
	props := schema["properties"].(map[string]any)
	for _, kw := range []string{"required", "title", "type", "description"} {
		if v, ok := props[kw]; ok {
			if _, isSchema := v.(map[string]any); !isSchema {
				delete(props, kw)
				schema[kw] = v
			}
		}
	}
}

// validate checks JSON text against s.
func validate(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// decodeJSON decodes b with encoding/json, failing the test on error.
func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}
