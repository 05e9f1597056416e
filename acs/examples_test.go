package acs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/wardenhq/warden/internal/acsschema"
	"github.com/wardenhq/warden/internal/sharedtest"
)

var jsonBlock = regexp.MustCompile("(?s)```json\\s*\\n(.*?)```")

// TestSpecExamples: every JSON example in shared/acs/spec and
// shared/acs/adapters that is a request gets an answer that validates
// against response-envelope.json. The examples predate the v0.1.0
// envelope or carry placeholders, so each is refused — with the code and
// the field named here, which the test checks too.
func TestSpecExamples(t *testing.T) {
	root := sharedtest.Path(t, "acs")
	sc := acsschema.Load(t)
	want := map[string]string{ // file and method → "code field" of the answer
		// the MCP message an agent prepares (not ACS): no such ACS method
		"spec/docs/spec/instrument/extend_mcp.md tools/call": "-32601 method",
		// the pre-0.1.0 wrapping: params is the MCP message, no envelope
		"spec/docs/spec/instrument/extend_mcp.md protocols/MCP/tools/call": "-32602 params.acs_version",
		// the adapters' walk-through: request_id "<uuid>"
		"adapters/README.md steps/toolCallRequest": "-32602 params.request_id",
	}
	seen := map[string]int{}
	for _, dir := range []string{"spec", "adapters"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			for _, m := range jsonBlock.FindAllSubmatch(b, -1) {
				var msg map[string]any
				if json.Unmarshal(m[1], &msg) != nil || msg["jsonrpc"] == nil || msg["method"] == nil {
					continue // not a request (a response, a host payload, a fragment)
				}
				seen[rel]++
				f := newFixture(t, func(o *Options) { o.Keys, o.RequireSignatures = nil, false })
				answer := f.h.Handle(t.Context(), m[1], "http")
				if err := sc.Response(answer); err != nil {
					t.Errorf("%s: the answer to %s does not validate: %v\n%s", rel, msg["method"], err, answer)
				}
				var a map[string]any
				json.Unmarshal(answer, &a)
				code, field := errCode(a), ""
				if e, ok := a["error"].(map[string]any); ok {
					field, _ = e["data"].(map[string]any)["field"].(string)
				}
				key := rel + " " + msg["method"].(string)
				if got := strings.TrimSpace(strings.Join([]string{itoa(code), field}, " ")); got != want[key] {
					t.Errorf("%s: answered %q, want %q: %s", key, got, want[key], answer)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// hooks.md's envelope template has a /* comment */ in place of the
	// payload: not JSON, so not an example to send.
	if seen["spec/docs/spec/instrument/extend_mcp.md"] != 6 || seen["adapters/README.md"] != 1 || len(seen) != 2 {
		t.Errorf("request examples found: %v (want 6 in extend_mcp.md, 1 in adapters/README.md)", seen)
	}
}

// examplePayloads is one valid payload of every method warden serves,
// each checked against its schema where ACS v0.1.0 publishes one.
func examplePayloads() map[string]map[string]any {
	hash := strings.Repeat("a1", 32)
	content := []any{map[string]any{"type": "text", "value": "hello"}}
	return map[string]map[string]any{
		"steps/sessionStart":           {"agent": map[string]any{"name": "a"}},
		"steps/agentTrigger":           {"trigger_type": "user_message"},
		"steps/turnStart":              {"turn_id": "t1", "triggered_by": "user_message"},
		"steps/userMessage":            {"content": content},
		"steps/agentResponse":          {"content": content, "reasoning": "because"},
		"steps/knowledgeRetrieval":     {"query": map[string]any{"value": "q"}, "results": []any{map[string]any{"value": "r", "source_id": "kb"}}},
		"steps/memoryContextRetrieval": {"results": []any{map[string]any{"value": "m"}}},
		"steps/memoryStore":            {"content": map[string]any{"value": "remember"}, "operation": "create"},
		"steps/toolCallRequest":        {"tool": map[string]any{"name": "ls"}, "arguments": map[string]any{"dir": map[string]any{"value": "."}}},
		"steps/toolCallResult": {"tool": map[string]any{"name": "ls"}, "exit_status": "success",
			"outputs": []any{map[string]any{"value": "a b"}}, "request_id_ref": uuid.NewString()},
		"steps/preCompact":  {"entries_to_compact": []any{"s1"}, "triggered_by": "size_threshold"},
		"steps/postCompact": {"summary": map[string]any{"value": "sum"}, "entries_compacted": []any{"s1"}, "pre_compact_chain_hash": hash, "post_compact_chain_hash": hash},
		"steps/subagentStart": {"subagent_session_id": uuid.NewString(), "parent_session_id": uuid.NewString(),
			"intent_derivation": "fresh"},
		"steps/subagentStop":  {"subagent_session_id": uuid.NewString(), "outcome": "completed"},
		"steps/skillRegister": {"skill_id": "s", "definition": map[string]any{"ref": "r", "digest": map[string]any{"algorithm": "sha256", "value": hash}}},
		"steps/skillLoad":     {"skill_id": "s", "digest": map[string]any{"algorithm": "sha256", "value": hash}, "load_trigger": "user"},
		"steps/skillUnload":   {"skill_id": "s", "reason": "explicit_unload"},
		"steps/turnEnd":       {"turn_id": "t1", "outcome": "completed"},
		"agbom/snapshot":      {"agbom": map[string]any{"components": []any{}}},
		"agbom/changed":       {"added": []any{}, "removed": []any{}},
		"protocols/MCP/tools/call": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Barcelona"}}},
		"protocols/MCP/resources/read": {"jsonrpc": "2.0", "id": 2, "result": map[string]any{"contents": []any{}}},
		"steps/sessionEnd":             {"session_reason": "completed"},
	}
}

// TestEveryMethodAccepted: a valid request of every method is accepted
// (validated against the request envelope and its payload schema first),
// and every answer — the ServerHello, each decision, a ping — validates
// against the response schema.
func TestEveryMethodAccepted(t *testing.T) {
	sc := acsschema.Load(t)
	f := newFixture(t, nil)
	s := f.session()
	s.id = uuid.NewString()
	check := func(method string, m map[string]any) map[string]any {
		t.Helper()
		req, _ := json.Marshal(m)
		if err := sc.Request(req); err != nil {
			t.Fatalf("%s: the request does not validate: %v", method, err)
		}
		b := f.h.Handle(t.Context(), req, "http")
		validate := sc.Response
		if method == MethodHello {
			validate = sc.HelloResponse
		}
		if err := validate(b); err != nil {
			t.Fatalf("%s: the answer does not validate: %v\n%s", method, err, b)
		}
		var a map[string]any
		json.Unmarshal(b, &a)
		if a["error"] != nil {
			t.Fatalf("%s: refused: %v", method, a["error"])
		}
		return a
	}
	hello := helloPayload(allHooks...)
	if err := sc.ClientHello(hello); err != nil {
		t.Fatal(err)
	}
	a := check(MethodHello, s.msg(MethodHello, hello, nil))
	if err := sc.ServerHello(a["result"]); err != nil {
		t.Errorf("ServerHello: %v", err)
	}
	check(MethodPing, s.msg(MethodPing, map[string]any{"echo": "x"}, nil))
	order := []string{"steps/sessionStart"}
	for m := range examplePayloads() {
		if m != "steps/sessionStart" && m != "steps/sessionEnd" {
			order = append(order, m)
		}
	}
	order = append(order, "steps/sessionEnd")
	ex := examplePayloads()
	for _, m := range order {
		if err := sc.PayloadCore(m, ex[m]); err != nil && !errors.Is(err, acsschema.ErrNoSchema) {
			t.Fatalf("%s: the example payload does not validate against its schema: %v", m, err)
		}
		res := check(m, s.msg(m, ex[m], nil))["result"].(map[string]any)
		if res["chain_hash"] == nil || res["signature"] == nil {
			t.Errorf("%s: a content-bearing answer without chain_hash or signature: %v", m, res)
		}
	}
}
