package acs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

func prov(id, origin string) map[string]any {
	return map[string]any{"provenance_id": id, "origin": origin}
}

// provArgs is a tool call whose every argument carries provenance.
func provArgs(name string, args map[string]any) map[string]any {
	w := map[string]any{}
	for k, v := range args {
		w[k] = map[string]any{"value": v, "provenance": prov("a"+k, "user_input")}
	}
	return map[string]any{"tool": map[string]any{"name": name}, "arguments": w}
}

func errField(r map[string]any) string {
	e, _ := r["error"].(map[string]any)
	d, _ := e["data"].(map[string]any)
	s, _ := d["field"].(string)
	return s
}

func TestProvenanceValidation(t *testing.T) {
	withProv := func(p map[string]any) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "value": "hi", "provenance": p}}}
	}
	for _, tc := range []struct {
		name    string
		method  string
		payload map[string]any
		field   string // "" = accepted
		msg     string
	}{
		{"valid", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1", "origin": "user_input",
			"source_id": "cli", "derived_from": []any{"p0"}}), "", ""},
		{"absent (not strict)", "steps/userMessage", text("hi"), "", ""},
		{"not an object", "steps/userMessage", withProv(nil), "params.payload.content[0].provenance", "must be an object"},
		{"no id", "steps/userMessage", withProv(map[string]any{"origin": "system"}),
			"params.payload.content[0].provenance.provenance_id", "required"},
		{"empty id", "steps/userMessage", withProv(map[string]any{"provenance_id": "", "origin": "system"}),
			"params.payload.content[0].provenance.provenance_id", "non-empty"},
		{"no origin", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1"}),
			"params.payload.content[0].provenance.origin", "required"},
		{"bad origin", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1", "origin": "internet"}),
			"params.payload.content[0].provenance.origin", `"internet" is not one of`},
		{"source_id not a string", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1", "origin": "system", "source_id": 3}),
			"params.payload.content[0].provenance.source_id", "must be a string"},
		{"derived_from not an array", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1", "origin": "system", "derived_from": "p0"}),
			"params.payload.content[0].provenance.derived_from", "array"},
		{"derived_from item", "steps/userMessage", withProv(map[string]any{"provenance_id": "p1", "origin": "system", "derived_from": []any{"p0", 1}}),
			"params.payload.content[0].provenance.derived_from[1]", "must be a string"},
		{"tool argument", "steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "ls"},
			"arguments": map[string]any{"dir": map[string]any{"value": ".", "provenance": prov("p1", "nowhere")}}},
			"params.payload.arguments.dir.provenance.origin", "is not one of"},
		{"tool output", "steps/toolCallResult", map[string]any{"tool": map[string]any{"name": "ls"}, "exit_status": "success",
			"outputs": []any{map[string]any{"value": "a"}, map[string]any{"value": "b", "provenance": map[string]any{"origin": "external"}}}},
			"params.payload.outputs[1].provenance.provenance_id", "required"},
		{"retrieval query", "steps/knowledgeRetrieval", map[string]any{"query": map[string]any{"value": "q", "provenance": 7},
			"results": []any{}}, "params.payload.query.provenance", "must be an object"},
		{"memory content", "steps/memoryStore", map[string]any{"content": map[string]any{"value": "x", "provenance": map[string]any{"provenance_id": "p", "origin": "retrieved", "derived_from": make([]any, maxDerivedFrom+1)}}},
			"params.payload.content.provenance.derived_from", "more than 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			s := f.session()
			s.hello()
			r := s.call(tc.method, tc.payload)
			if tc.field == "" {
				if r["error"] != nil {
					t.Fatalf("refused: %v", r["error"])
				}
				return
			}
			if errCode(r) != CodeInvalidParams || errField(r) != tc.field {
				t.Fatalf("error %d at %q, want -32602 at %q: %v", errCode(r), errField(r), tc.field, r["error"])
			}
			if msg := r["error"].(map[string]any)["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q does not say %q", msg, tc.msg)
			}
		})
	}
}

func TestProvenanceStrictSession(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	hello := helloPayload(allHooks...)
	hello["profiles_supported"] = []any{"acs-core", ProfileProvenance}
	// acs-provenance with a producer of none is refused at the handshake.
	if r := s.call(MethodHello, hello); errCode(r) != CodeInvalidParams || errField(r) != "params.payload.provenance_producer" {
		t.Fatalf("acs-provenance with producer none: %v", r)
	}
	hello["provenance_producer"] = "deterministic"
	if r := s.call(MethodHello, hello); r["error"] != nil {
		t.Fatalf("handshake: %v", r["error"])
	}
	if st, err := f.store.ACSSession(context.Background(), s.id); err != nil || !reflect.DeepEqual(st.Profiles, []string{"acs-core", ProfileProvenance}) {
		t.Fatalf("stored profiles %v, %v", st, err)
	}
	// Every data-bearing field needs provenance now.
	r := s.call("steps/toolCallRequest", map[string]any{"tool": map[string]any{"name": "ls"},
		"arguments": map[string]any{"a": map[string]any{"value": 1, "provenance": prov("p1", "user_input")}, "b": map[string]any{"value": 2}}})
	if errCode(r) != CodeInvalidParams || errField(r) != "params.payload.arguments.b.provenance" {
		t.Fatalf("an argument without provenance: %v", r)
	}
	if r := s.call("steps/userMessage", text("hi")); errField(r) != "params.payload.content[0].provenance" {
		t.Fatalf("content without provenance: %v", r)
	}
	if r := s.call("steps/toolCallRequest", provArgs("ls", map[string]any{"a": 1, "b": 2})); r["error"] != nil {
		t.Fatalf("with provenance: %v", r["error"])
	}
	// Hooks without data-bearing fields are untouched.
	if r := s.call("steps/turnStart", map[string]any{}); r["error"] != nil {
		t.Fatalf("turnStart: %v", r["error"])
	}
}

// TestProvenanceLabels: an untrusted origin labels the session (once the
// step is taken); policies see the provenance and session.labels.
func TestProvenanceLabels(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pol, []byte(`id: no-shell-after-untrusted
version: "1"
events: ["steps/toolCallRequest"]
when: '"untrusted_input" in session.labels && tool.name == "Bash"'
decision: deny
reasonExpr: '"session labels: " + session.labels.join(",")'
---
id: deny-from-mallory
version: "1"
events: ["steps/toolCallResult"]
when: provenance.exists(p, p.source_id == "mallory")
decision: deny
`), 0o600); err != nil {
		t.Fatal(err)
	}
	store := storetest.NewMem()
	g, err := guardian.Open(guardian.Options{Policies: []string{pol}, NoBuiltin: true, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	f := &fixture{t: t, store: store, g: g, now: time.Now()}
	if f.h, err = NewHandler(g, Options{Sessions: store, Keys: map[string][]byte{"k1": testKey}, Now: func() time.Time { return f.now }}); err != nil {
		t.Fatal(err)
	}
	s := f.session()
	s.hello()
	result := func(origin, source string) map[string]any {
		p := prov("o1", origin)
		p["source_id"] = source
		return map[string]any{"tool": map[string]any{"name": "fetch"}, "exit_status": "success",
			"outputs": []any{map[string]any{"value": "page", "provenance": p}}}
	}
	// A denied result of untrusted origin sets no label.
	if d := decisionOf(t, s.call("steps/toolCallResult", result("external", "mallory"))); d != "deny" {
		t.Fatalf("mallory's result: %s", d)
	}
	if d := decisionOf(t, s.call("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "ls"}))); d != "allow" {
		t.Fatalf("shell before untrusted input: %s", d)
	}
	// Trusted origins set none either.
	decisionOf(t, s.call("steps/toolCallResult", result("user_input", "cli")))
	if ls, _ := g.SessionLabels(context.Background(), "", s.id); ls != nil {
		t.Fatalf("labels %q after trusted data", ls)
	}
	// A taken result of external origin does.
	if d := decisionOf(t, s.call("steps/toolCallResult", result("external", "https://example.com"))); d != "allow" {
		t.Fatalf("web result: %s", d)
	}
	if ls, _ := g.SessionLabels(context.Background(), "", s.id); !reflect.DeepEqual(ls, []string{"untrusted_input"}) {
		t.Fatalf("labels %q, want untrusted_input", ls)
	}
	r := s.call("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "ls"}))
	if d := decisionOf(t, r); d != "deny" || !strings.Contains(r["result"].(map[string]any)["reasoning"].(string), "session labels: untrusted_input") {
		t.Fatalf("shell after untrusted input: %v", r)
	}
	// Kept in the store: a new Guardian on it sees them.
	if ls, _ := store.SessionLabels(context.Background(), "", s.id); !reflect.DeepEqual(ls, []string{"untrusted_input"}) {
		t.Fatalf("stored labels %q", ls)
	}
}

func decisionOf(t *testing.T, r map[string]any) string {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", r)
	}
	d, _ := res["decision"].(string)
	return d
}
