package hooks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// TestAttackDuplicateArgNamesDispatch: POST /api/hooks/dispatch refuses a
// tool call whose arguments name one argument twice, on every event whose
// arguments arrive as named values: an AOS step's inputs list, an AGH
// tool_input object, and arguments sent as JSON text (an AGH tool_input
// string, a Standard Agents tool_call.function.arguments), where the view
// kept the last value while the tool may use the first.
func TestAttackDuplicateArgNamesDispatch(t *testing.T) {
	dir := t.TempDir()
	pol := "id: no-external-email\nversion: \"1\"\nevents: [\"steps/toolCallRequest\", \"tool.pre_call\", \"after_tool_call_success\"]\n" +
		"when: 'tool.name == \"send_email\" && !string(tool.args.to).endsWith(\"@company.io\")'\n" +
		"decision: deny\nreason: external email\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views})
	srv := httptest.NewServer(NewDispatcher(dec))
	defer srv.Close()
	dispatch := func(event, payload string) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"event": event, "payload": json.RawMessage(payload)})
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	jsonText := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	aosCall := func(inputs string) string {
		return `{"context":{},"toolCallRequest":{"executionId":"e1","toolId":"send_email","inputs":[` + inputs + `]}}`
	}
	std := func(args string) string {
		return `{"thread_id":"t","tool_call":{"id":"c1","type":"function","function":{"name":"send_email","arguments":` + jsonText(args) + `}},"result":"sent"}`
	}
	agh := func(input string) string {
		return `{"session_id":"s","tool_name":"send_email","tool_input":` + input + `}`
	}

	// The policy holds on one value, on each shape.
	for _, c := range []struct{ event, payload, want string }{
		{"steps/toolCallRequest", aosCall(`{"name":"to","value":"evil@attacker.example"}`), "deny"},
		{"tool.pre_call", agh(jsonText(`{"to":"evil@attacker.example"}`)), "deny"},
		{"tool.pre_call", agh(jsonText(`{"to":"ok@company.io"}`)), "allow"},
		{"after_tool_call_success", std(`{"to":"evil@attacker.example"}`), "deny"},
	} {
		code, body := dispatch(c.event, c.payload)
		if code != 200 || !strings.Contains(body, `"decision":"`+c.want+`"`) {
			t.Fatalf("%s %s: %d %s, want %s", c.event, c.payload, code, body, c.want)
		}
	}

	for _, c := range []struct{ name, event, payload, want string }{
		{"aos inputs", "steps/toolCallRequest",
			aosCall(`{"name":"to","value":"evil@attacker.example"},{"name":"to","value":"ok@company.io"}`),
			`invalid payload: params.toolCallRequest.inputs[1].name: duplicate input name \"to\" (also inputs[0])`},
		{"aos inputs, case", "steps/toolCallRequest",
			aosCall(`{"name":"TO","value":"evil@attacker.example"},{"name":"to","value":"ok@company.io"}`),
			`input names \"TO\" (inputs[0]) and \"to\" differ only in case`},
		{"agh tool_input object", "tool.pre_call", agh(`{"to":"evil@attacker.example","to":"ok@company.io"}`),
			`duplicate key \"to\" in payload.tool_input`},
		{"agh tool_input JSON text", "tool.pre_call", agh(jsonText(`{"to":"evil@attacker.example","to":"ok@company.io"}`)),
			`invalid payload: payload.tool_input: JSON text with duplicate key \"to\"`},
		{"agh tool_input JSON text, case", "tool.pre_call", agh(jsonText(`{"To":"evil@attacker.example","to":"ok@company.io"}`)),
			`payload.tool_input: JSON text with keys \"To\" and \"to\" differ only in case`},
		{"standard function.arguments", "after_tool_call_success", std(`{"to":"evil@attacker.example","to":"ok@company.io"}`),
			`invalid payload: payload.tool_call.function.arguments: JSON text with duplicate key \"to\"`},
		{"standard function.arguments, nested", "after_tool_call_success", std(`{"to":"ok@company.io","opts":{"cc":"a","cc":"b"}}`),
			`payload.tool_call.function.arguments (opts): JSON text with duplicate key \"cc\"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := dispatch(c.event, c.payload)
			if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Fatalf("%d %s, want 400 with %s", code, body, c.want)
			}
		})
	}
}
