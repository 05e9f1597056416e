package policytest

import (
	"strings"
	"testing"
)

// aosCall is an AOS tool call request to send_email (tool t-email) to
// the given recipient, with the id and executionId given.
func aosCall(id, to string) string {
	return `{jsonrpc: "2.0", id: ` + id + `, method: steps/toolCallRequest, params: {
      toolCallRequest: {executionId: ex-1, toolId: t-email, inputs: [{name: to, value: "` + to + `"}]},
      context: {agent: {id: a1, name: A, version: "1", provider: {name: p, url: "https://p.example"},
        model: {id: m, name: m, provider: {name: p}}, tools: [{id: t-email, name: send_email, type: function_call}]},
        session: {id: s1}, turnId: t1, stepId: st1, timestamp: "2026-01-01T00:00:00Z"}}}`
}

// aosToolResult is the result of the call aosCall made, carrying text.
const aosToolResult = `{jsonrpc: "2.0", id: 2, method: steps/toolCallResult, params: {
      toolCallResult: {executionId: ex-1, result: {isError: false, outputs: [{kind: text, text: "sent, card 4111 1111 1111 1111"}]}},
      context: {agent: {id: a1, name: A, version: "1", provider: {name: p, url: "https://p.example"},
        model: {id: m, name: m, provider: {name: p}}}, session: {id: s1}, turnId: t1, stepId: st2, timestamp: "2026-01-01T00:00:01Z"}}}`

// resultTool denies results of send_email: the tool is known only when
// the result is correlated with its call.
const resultTool = `id: no-email-results
version: "1"
events: [steps/toolCallResult]
when: tool.name == "send_email"
decision: deny
reason: email results are private
`

func TestCases(t *testing.T) {
	tests := []struct {
		name     string
		testCase string // one case of a file with emailPolicy, cardsPolicy and resultTool
		fail     string // "" passes; else a substring of the failure
	}{
		{"event ask", `event: tool.pre_call
    payload: {tool_name: send_email, tool_input: {to: x@evil.example}}
    expect: {decision: ask, policy: no-external-email, reason: requires approval}`, ""},
		{"event modify output", `event: tool.pre_call
    payload: {tool_name: search, tool_input: {q: "card 4111 1111 1111 1111"}}
    expect: {decision: modify, policy: redact-cards, output_contains: ["[REDACTED:credit_card]", '"tool_name":"search"'], output_not_contains: "4111"}`, ""},
		{"event output missing", `event: tool.pre_call
    payload: {tool_name: search, tool_input: {q: hi}}
    expect: {decision: allow, output_contains: x}`, `no modified output, want one containing "x"`},
		{"event output not contains", `event: tool.pre_call
    payload: {tool_name: search, tool_input: {q: "card 4111 1111 1111 1111"}}
    expect: {decision: modify, output_not_contains: search}`, `output contains "search"`},
		{"event wrong policy", `event: tool.pre_call
    payload: {tool_name: send_email, tool_input: {to: x@evil.example}}
    expect: {decision: ask, policy: other}`, "policy no-external-email, want policy other"},
		{"event payload refused", `event: steps/toolCallRequest
    payload: {toolCallRequest: 1}
    expect: {decision: allow}`, "could not decide"},
		{"aos ask is answered deny", `aos: ` + aosCall("1", "x@evil.example") + `
    expect: {decision: deny, policy: no-external-email, reason: "denied by policy no-external-email: external email requires approval"}`, ""},
		{"aos allow", `aos: ` + aosCall("1", "ann@company.io") + `
    expect: {decision: allow, reason: default decision allow}`, ""},
		{"aos result correlated by setup", `setup: [` + aosCall("1", "ann@company.io") + `]
    aos: ` + aosToolResult + `
    expect: {decision: deny, policy: no-email-results}`, ""},
		{"aos result without its call", `aos: ` + aosToolResult + `
    expect: {decision: modify, policy: redact-cards, output_contains: '"text":"sent, card [REDACTED:credit_card]"'}`, ""},
		{"aos wrong decision", `aos: ` + aosCall("1", "ann@company.io") + `
    expect: {decision: deny}`, "decision allow, want deny"},
		{"aos JSON-RPC error", `aos: {jsonrpc: "2.0", id: 1, method: steps/nothing, params: {}}
    expect: {decision: allow}`, "answered with JSON-RPC error -32601"},
		{"aos notification", `aos: {jsonrpc: "2.0", method: steps/message, params: {}}
    expect: {decision: allow}`, "no id"},
		{"aos ping", `aos: {jsonrpc: "2.0", id: 1, method: ping}
    expect: {decision: allow}`, "no decision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := runIn(t, map[string]string{"p.yaml": emailPolicy + "---\n" + cardsPolicy + "---\n" + resultTool,
				"p_test.yaml": "builtin: false\ntests:\n  - name: c\n    " + tt.testCase + "\n"})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Files[0].Cases[0]
			if tt.fail == "" {
				if !c.Passed {
					t.Fatalf("failed: %s", c.Text("p_test.yaml"))
				}
				return
			}
			if c.Passed || !strings.Contains(strings.Join(c.Failures, "; "), tt.fail) {
				t.Fatalf("passed %v, failures %q, want one containing %q", c.Passed, c.Failures, tt.fail)
			}
		})
	}
}

// TestDefaultDecision: a file's defaultDecision decides when no policy does.
func TestDefaultDecision(t *testing.T) {
	rep, err := runIn(t, map[string]string{"p.yaml": emailPolicy, "p_test.yaml": `builtin: false
defaultDecision: deny
tests:
  - name: nothing matches
    event: tool.pre_call
    payload: {tool_name: search}
    expect: {decision: deny, reason: default decision deny}
`})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Files[0].Cases[0]; !c.Passed {
		t.Error(c.Text("p_test.yaml"))
	}
}
