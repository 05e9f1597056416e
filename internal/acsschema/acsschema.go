// Package acsschema validates JSON against the OWASP Agent Control Standard
// (ACS v0.1.0) JSON Schemas kept in shared/acs/schemas (WARDEN_SHARED), for
// tests. It is for tests only.
//
// The copy of the schemas is incomplete and mixes two namespaces, so loading
// repairs it in memory (the files are never changed):
//
//   - response-envelope.json (and the current hooks/subagent-stop.json) have
//     their $id under Base, while the older drafts under
//     older-Agent-Control-Standard-ACS/specification/v0.1.0/ have theirs
//     under https://acs.org/schema/v0.1.0/. Every file is re-based: its $id
//     is rewritten to Base plus its path below v0.1.0/, so that
//     response-envelope.json's relative $refs (modifications.json,
//     request-envelope.json#/$defs/Signature) and the hooks' ../provenance.json
//     resolve. Where both copies have a path, the current one wins.
//   - ask-details.json and defer-details.json, which response-envelope.json
//     refers to, are in neither copy. They are registered as permissive
//     stand-ins, {"type":"object"}: an ask_details or defer_details object is
//     accepted whatever it holds. (acsclient.VerifyResponse checks the members
//     the specification's prose requires of them.)
//
// Formats (uuid, date-time, uri) are asserted, not just annotated.
//
// The older hook drafts require provenance on every content item, which only
// the ACS-Provenance profile demands; ACS-Core makes it optional
// (conformance.md, ACS-Core). Payload validates against the drafts as they
// are; PayloadCore against a second compiled copy in which "provenance" is
// removed from every required list.
package acsschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wardenhq/warden/internal/sharedtest"
)

// Base is the namespace every schema is loaded under.
const Base = "https://genai-security-project.github.io/agent-control-standard/schema/v0.1.0/"

// The directories under shared/acs/schemas holding v0.1.0 schemas, the
// older drafts first so that the current files replace them.
var sources = []string{
	"older-Agent-Control-Standard-ACS/specification/v0.1.0",
	"specification/v0.1.0",
}

// standIns are the schemas response-envelope.json refers to that no copy
// has.
var standIns = []string{"ask-details.json", "defer-details.json"}

// ErrNoSchema is returned by Payload and PayloadCore for a method whose
// payload schema is not in the copy (for example steps/sessionStart, the
// system-ping and agbom schemas) or has none (protocols/MCP/*).
var ErrNoSchema = errors.New("acsschema: no payload schema for this method in shared/acs/schemas")

// Schemas holds the compiled ACS schemas.
type Schemas struct {
	response, request, clientHello, serverHello, modifications, signature *jsonschema.Schema
	strict, core                                                          map[string]*jsonschema.Schema // hooks/<file> → schema
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Schemas{}
)

// Load returns the schemas under shared/acs/schemas, compiled once per
// process. Without WARDEN_SHARED the test is skipped with one line saying so;
// a schema that does not load or compile fails it.
func Load(t testing.TB) *Schemas {
	t.Helper()
	dir := sharedtest.Path(t, "acs", "schemas")
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("ACS schemas (WARDEN_SHARED): %v", err)
	}
	return s
}

// LoadDir loads and compiles the schemas under dir (shared/acs/schemas),
// caching the result by dir.
func LoadDir(dir string) (*Schemas, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if s, ok := cache[dir]; ok {
		return s, nil
	}
	s, err := load(dir)
	if err != nil {
		return nil, err
	}
	cache[dir] = s
	return s, nil
}

func load(dir string) (*Schemas, error) {
	docs := map[string]any{} // path below v0.1.0/ → document
	for _, src := range sources {
		root := filepath.Join(dir, filepath.FromSlash(src))
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			doc, err := jsonschema.UnmarshalJSON(f)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			docs[filepath.ToSlash(rel)] = doc
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, name := range standIns {
		if _, ok := docs[name]; !ok {
			docs[name] = map[string]any{
				"$schema":     "https://json-schema.org/draft/2020-12/schema",
				"title":       "stand-in: " + name + " is missing from shared/acs/schemas",
				"type":        "object",
				"description": "Permissive stand-in registered by internal/acsschema.",
			}
		}
	}
	for _, need := range []string{"response-envelope.json", "request-envelope.json", "handshake.json", "modifications.json"} {
		if _, ok := docs[need]; !ok {
			return nil, fmt.Errorf("%s: no %s under %v", dir, need, sources)
		}
	}

	strict, err := compiler(docs, false)
	if err != nil {
		return nil, err
	}
	core, err := compiler(docs, true)
	if err != nil {
		return nil, err
	}
	s := &Schemas{strict: map[string]*jsonschema.Schema{}, core: map[string]*jsonschema.Schema{}}
	for _, c := range []struct {
		dst **jsonschema.Schema
		loc string
	}{
		{&s.response, "response-envelope.json"},
		{&s.request, "request-envelope.json"},
		{&s.clientHello, "handshake.json#/$defs/ClientHello"},
		{&s.serverHello, "handshake.json#/$defs/ServerHello"},
		{&s.modifications, "modifications.json"},
		{&s.signature, "request-envelope.json#/$defs/Signature"},
	} {
		if *c.dst, err = strict.Compile(Base + c.loc); err != nil {
			return nil, fmt.Errorf("compile %s: %w", c.loc, err)
		}
	}
	for rel := range docs {
		if !strings.HasPrefix(rel, "hooks/") {
			continue
		}
		if s.strict[rel], err = strict.Compile(Base + rel); err != nil {
			return nil, fmt.Errorf("compile %s: %w", rel, err)
		}
		if s.core[rel], err = core.Compile(Base + rel); err != nil {
			return nil, fmt.Errorf("compile %s (provenance optional): %w", rel, err)
		}
	}
	return s, nil
}

// compiler registers every document under Base with its $id re-based; with
// provenanceOptional, "provenance" is dropped from every required list of a
// deep copy.
func compiler(docs map[string]any, provenanceOptional bool) (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for rel, doc := range docs {
		doc = deepCopy(doc)
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a JSON object", rel)
		}
		m["$id"] = Base + rel
		if provenanceOptional {
			dropRequired(m, "provenance")
		}
		if err := c.AddResource(Base+rel, m); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	return c, nil
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// dropRequired removes name from every "required" array in v, at any depth.
// ("properties" maps member names to schemas, never to arrays, so a member
// called "required" is not mistaken for the keyword.)
func dropRequired(v any, name string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if l, ok := e.([]any); ok && k == "required" {
				kept := l[:0:0]
				for _, r := range l {
					if r != name {
						kept = append(kept, r)
					}
				}
				x[k] = kept
				continue
			}
			dropRequired(e, name)
		}
	case []any:
		for _, e := range x {
			dropRequired(e, name)
		}
	}
}

// instance turns v into the value a schema validates: []byte and
// json.RawMessage are JSON text; anything else is encoded with encoding/json
// first, so structs are validated as the JSON they become.
func instance(v any) (any, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case json.RawMessage:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func validate(s *jsonschema.Schema, v any) error {
	inst, err := instance(v)
	if err != nil {
		return fmt.Errorf("acsschema: not JSON: %w", err)
	}
	return s.Validate(inst)
}

// Response validates a JSON-RPC response (a decision result or an error)
// against response-envelope.json. A ServerHello is not an AcsResult; check a
// handshake answer with HelloResponse.
func (s *Schemas) Response(b []byte) error { return validate(s.response, b) }

// Request validates a JSON-RPC request against request-envelope.json. Its
// payload is only checked to be an object; see Payload.
func (s *Schemas) Request(b []byte) error { return validate(s.request, b) }

// ClientHello validates a handshake/hello payload against
// handshake.json#/$defs/ClientHello.
func (s *Schemas) ClientHello(v any) error { return validate(s.clientHello, v) }

// ServerHello validates a handshake/hello result against
// handshake.json#/$defs/ServerHello. (The draft names the failure posture
// on_timeout; specification §4 says on_decision_failure. Neither is
// required and unknown members are allowed, so both pass.)
func (s *Schemas) ServerHello(v any) error { return validate(s.serverHello, v) }

// Modifications validates a modifications object against modifications.json.
func (s *Schemas) Modifications(v any) error { return validate(s.modifications, v) }

// Signature validates a signature object against
// request-envelope.json#/$defs/Signature.
func (s *Schemas) Signature(v any) error { return validate(s.signature, v) }

// HelloResponse validates the answer to handshake/hello: an error against
// response-envelope.json; a result as a JSON-RPC 2.0 response (jsonrpc
// "2.0", a string or number id, no other members) whose result is a
// ServerHello and whose result.signature, when present, is a Signature.
func (s *Schemas) HelloResponse(b []byte) error {
	inst, err := instance(b)
	if err != nil {
		return fmt.Errorf("acsschema: not JSON: %w", err)
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return fmt.Errorf("acsschema: the answer is a %T, not an object", inst)
	}
	if _, isErr := m["error"]; isErr {
		return s.response.Validate(inst)
	}
	var errs []error
	if m["jsonrpc"] != "2.0" {
		errs = append(errs, fmt.Errorf("jsonrpc is %v, want \"2.0\"", m["jsonrpc"]))
	}
	switch m["id"].(type) {
	case string, json.Number:
	default:
		errs = append(errs, fmt.Errorf("id is %v, want a string or number", m["id"]))
	}
	for k := range m {
		if k != "jsonrpc" && k != "id" && k != "result" {
			errs = append(errs, fmt.Errorf("unexpected member %q", k))
		}
	}
	result, ok := m["result"].(map[string]any)
	if !ok {
		return errors.Join(append(errs, fmt.Errorf("result is missing or not an object"))...)
	}
	if err := s.serverHello.Validate(result); err != nil {
		errs = append(errs, err)
	}
	if sig, ok := result["signature"]; ok {
		if err := s.signature.Validate(sig); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Payload validates the params.payload of method against its hook schema as
// the copy has it (provenance required where the drafts require it):
// handshake/hello → handshake.json#/$defs/ClientHello; steps/<hook> →
// hooks/<kebab-case hook>.json (steps/toolCallRequest →
// hooks/tool-call-request.json); system/ping → hooks/system-ping.json;
// agbom/snapshot and agbom/changed → hooks/agbom-snapshot.json and
// hooks/agbom-changed.json. It returns ErrNoSchema when that file is not in
// the copy or the method has no payload schema.
func (s *Schemas) Payload(method string, v any) error { return s.payload(s.strict, method, v) }

// PayloadCore is Payload with provenance optional everywhere, as ACS-Core
// validates hook payloads.
func (s *Schemas) PayloadCore(method string, v any) error { return s.payload(s.core, method, v) }

func (s *Schemas) payload(set map[string]*jsonschema.Schema, method string, v any) error {
	if method == "handshake/hello" {
		return s.ClientHello(v)
	}
	file := PayloadFile(method)
	sch, ok := set[file]
	if file == "" || !ok {
		return fmt.Errorf("%w: %s", ErrNoSchema, method)
	}
	return validate(sch, v)
}

// PayloadFile is the path below v0.1.0/ of method's payload schema
// (hooks/tool-call-request.json for steps/toolCallRequest), or "" for a
// method outside steps/*, system/* and agbom/*. The file may be missing from
// the copy.
func PayloadFile(method string) string {
	ns, name, ok := strings.Cut(method, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return ""
	}
	switch ns {
	case "steps":
		return "hooks/" + kebab(name) + ".json"
	case "system", "agbom":
		return "hooks/" + ns + "-" + kebab(name) + ".json"
	}
	return ""
}

func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// PayloadMethods lists the steps/* methods whose payload schema the copy
// has, sorted.
func (s *Schemas) PayloadMethods() []string {
	var out []string
	for rel := range s.strict {
		name := strings.TrimSuffix(strings.TrimPrefix(rel, "hooks/"), ".json")
		if strings.HasPrefix(name, "system-") || strings.HasPrefix(name, "agbom-") {
			continue
		}
		parts := strings.Split(name, "-")
		for i := 1; i < len(parts); i++ {
			if parts[i] != "" {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
		}
		out = append(out, "steps/"+strings.Join(parts, ""))
	}
	sort.Strings(out)
	return out
}
