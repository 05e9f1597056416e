package hostadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/hostadapter"
)

// seen records the steps it decides and allows each.
type seen struct{ steps []*hostadapter.Step }

func (s *seen) Check(_ context.Context, st *hostadapter.Step) (hostadapter.Answer, error) {
	s.steps = append(s.steps, st)
	return hostadapter.Answer{Decision: "allow"}, nil
}

// TestAttackDuplicateArgNamesCursorMCP: Cursor sends an MCP tool's input as
// JSON text; one naming an argument twice was mapped to its last value
// (what the policies saw) while the MCP server may use the first. It is
// refused as a duplicate key in the hook's own JSON is (the guardian is not
// asked; the gate denies), for exact duplicates and case variants.
func TestAttackDuplicateArgNamesCursorMCP(t *testing.T) {
	mcp := func(input string) string {
		b, _ := json.Marshal(input)
		return `{"conversation_id":"c1","hook_event_name":"beforeMCPExecution","tool_name":"send_email","url":"https://mcp.example/mcp","tool_input":` + string(b) + `}`
	}
	// One value: mapped and decided.
	d := &seen{}
	o := hostadapter.Run(context.Background(), hostadapter.Cursor, d, strings.NewReader(mcp(`{"to":"ok@company.io"}`)), hostadapter.Options{})
	if len(d.steps) != 1 || o.Exit != 0 {
		t.Fatalf("one to: %d steps, exit %d %s %s", len(d.steps), o.Exit, o.Stdout, o.Stderr)
	}
	args, _ := d.steps[0].Payload["arguments"].(map[string]any)
	if to, _ := args["to"].(map[string]any); to["value"] != "ok@company.io" {
		t.Fatalf("arguments %v", d.steps[0].Payload["arguments"])
	}
	for _, c := range []struct{ name, input, want string }{
		{"same name", `{"to":"evil@attacker.example","to":"ok@company.io"}`, `tool_input: JSON text with duplicate key "to" at the top level`},
		{"case variant", `{"To":"evil@attacker.example","to":"ok@company.io"}`, `tool_input: JSON text with keys "To" and "to" differ only in case at the top level`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &seen{}
			o := hostadapter.Run(context.Background(), hostadapter.Cursor, d, strings.NewReader(mcp(c.input)), hostadapter.Options{})
			if len(d.steps) != 0 {
				t.Fatalf("the guardian was asked about %v", d.steps[0].Payload)
			}
			if !strings.Contains(string(o.Stdout), `"permission":"deny"`) || !strings.Contains(o.Stderr, c.want) {
				t.Fatalf("exit %d stdout %s stderr %q, want a deny with %s", o.Exit, o.Stdout, o.Stderr, c.want)
			}
		})
	}
}
