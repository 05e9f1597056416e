package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hooks"
)

// fourWayPolicies read every view a policy can read: tool, message, user,
// agent and text. Each denies with its own reason, so a path that builds a
// view differently answers differently.
const fourWayPolicies = `id: no-wires
version: "1"
events: ["*"]
when: 'tool.name == "wire_money" || tool.args.exists(k, k == "iban")'
decision: deny
reason: wires are blocked
---
id: no-forbidden-words
version: "1"
events: ["*"]
when: 'message.text.contains("forbidden")'
decision: deny
reason: forbidden words
---
id: no-mallory
version: "1"
events: ["*"]
when: 'user.id == "mallory" || agent.id == "rogue" || agent.name == "rogue"'
decision: deny
reason: untrusted principal
---
id: no-keys-in-text
version: "1"
events: ["*"]
when: '"aws_access_key" in secrets(text)'
decision: deny
reason: a secret in the step
---
id: ask-for-email
version: "1"
events: ["*"]
when: 'tool.name == "send_email"'
decision: ask
reason: email needs approval
`

// fourWayPayloads returns, for one catalog event, payloads that put the
// same bad (and one benign) content where that event's views read it.
func fourWayPayloads(e catalog.Event) map[string]any {
	tool := func(name string, args map[string]any) map[string]any {
		switch e.Source {
		case catalog.SourceAGH:
			return map[string]any{"session_id": "s1", "tool_name": name, "tool_input": args, "tool_call_id": "c1"}
		case catalog.SourceStandardAgents:
			a, _ := json.Marshal(args)
			return map[string]any{"thread_id": "s1", "tool_call": map[string]any{"id": "c1",
				"function": map[string]any{"name": name, "arguments": string(a)}}}
		}
		return nil
	}
	text := func(s string) map[string]any {
		switch e.Source {
		case catalog.SourceAGH:
			return map[string]any{"session_id": "s1", "message": s, "prompt": s, "text": s, "role": "user"}
		case catalog.SourceStandardAgents:
			m := map[string]any{"role": "user", "content": s}
			return map[string]any{"thread_id": "s1", "message": m, "messages": []any{m}}
		}
		return nil
	}
	who := func(user, agent string) map[string]any {
		switch e.Source {
		case catalog.SourceAGH:
			return map[string]any{"session_id": "s1", "agent_name": agent}
		case catalog.SourceStandardAgents:
			return map[string]any{"thread_id": "s1", "user_id": user, "agent_id": agent}
		}
		return nil
	}
	if e.Source == catalog.SourceAOS {
		return aosPayloads(e)
	}
	if e.Source == catalog.SourceACS {
		return acsPayloads(e)
	}
	return map[string]any{
		"benign":    text("what is on my calendar"),
		"wire tool": tool("wire_money", map[string]any{"iban": "DE89370400440532013000"}),
		"email":     tool("send_email", map[string]any{"to": "bob@example.com"}),
		"forbidden": text("say the forbidden word"),
		"principal": who("mallory", "rogue"),
		"secret":    text("key AKIAIOSFODNN7EXAMPLE"),
	}
}

// aosPayloads: the same contents in the shape of an AOS method's params
// (steps/*) or the protocol message (MCP, A2A).
func aosPayloads(e catalog.Event) map[string]any {
	ctx := func(user, agent string) map[string]any {
		return map[string]any{"session": map[string]any{"id": "s1"}, "user": map[string]any{"id": user},
			"agent": map[string]any{"id": agent, "name": agent}}
	}
	switch e.Family {
	case catalog.FamilySteps:
		step := func(c map[string]any, extra map[string]any) map[string]any {
			p := map[string]any{"context": c}
			for k, v := range extra {
				p[k] = v
			}
			return p
		}
		msg := func(s string) map[string]any {
			return map[string]any{"role": "user", "content": []any{map[string]any{"kind": "text", "text": s}}}
		}
		member := map[string]func(s string) map[string]any{
			catalog.MethodAgentTrigger: func(s string) map[string]any {
				return map[string]any{"trigger": map[string]any{"type": "chat", "content": []any{map[string]any{"kind": "text", "text": s}}}}
			},
			catalog.MethodToolCallRequest: func(s string) map[string]any {
				return map[string]any{"toolCallRequest": map[string]any{"executionId": "x1", "toolId": "notes",
					"inputs": []any{map[string]any{"name": "body", "value": s}}}}
			},
			catalog.MethodToolCallResult: func(s string) map[string]any {
				return map[string]any{"toolCallResult": map[string]any{"executionId": "x1",
					"result": map[string]any{"outputs": []any{map[string]any{"name": "out", "value": s}}}}}
			},
			catalog.MethodMessage:                func(s string) map[string]any { return map[string]any{"message": msg(s)} },
			catalog.MethodMemoryContextRetrieval: func(s string) map[string]any { return map[string]any{"memory": []any{s}} },
			catalog.MethodMemoryStore:            func(s string) map[string]any { return map[string]any{"memory": []any{s}} },
			catalog.MethodKnowledgeRetrieval: func(s string) map[string]any {
				return map[string]any{"knowledgeStep": map[string]any{"query": s, "results": []any{}}}
			},
		}[e.Name]
		out := map[string]any{
			"benign":    step(ctx("alice", "helper"), member("what is on my calendar")),
			"forbidden": step(ctx("alice", "helper"), member("say the forbidden word")),
			"principal": step(ctx("mallory", "rogue"), member("hello")),
			"secret":    step(ctx("alice", "helper"), member("key AKIAIOSFODNN7EXAMPLE")),
		}
		if e.Name == catalog.MethodToolCallRequest {
			out["wire tool"] = step(ctx("alice", "helper"), map[string]any{"toolCallRequest": map[string]any{
				"executionId": "x2", "toolId": "wire_money", "inputs": []any{map[string]any{"name": "iban", "value": "DE89370400440532013000"}}}})
			out["email"] = step(ctx("alice", "helper"), map[string]any{"toolCallRequest": map[string]any{
				"executionId": "x3", "toolId": "send_email", "inputs": []any{map[string]any{"name": "to", "value": "bob@example.com"}}}})
		}
		return out
	case catalog.FamilyProtocols:
		if e.Name == catalog.MethodMCP && e.Direction == warden.Inbound {
			result := func(s string) map[string]any {
				return map[string]any{"jsonrpc": "2.0", "id": 1.0, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}}
			}
			return map[string]any{"benign": result("3 meetings"), "secret": result("key AKIAIOSFODNN7EXAMPLE")}
		}
		if e.Name == catalog.MethodMCP {
			call := func(name string, args map[string]any) map[string]any {
				return map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}
			}
			return map[string]any{
				"benign":    call("calendar", map[string]any{"day": "today"}),
				"wire tool": call("wire_money", map[string]any{"iban": "DE89370400440532013000"}),
				"email":     call("send_email", map[string]any{"to": "bob@example.com"}),
				"secret":    call("notes", map[string]any{"body": "key AKIAIOSFODNN7EXAMPLE"}),
			}
		}
	}
	// protocols/A2A and the A2A hook methods: an A2A JSON-RPC message.
	send := func(s string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": catalog.A2ASend, "params": map[string]any{
			"message": map[string]any{"kind": "message", "role": "user", "messageId": "m1",
				"parts": []any{map[string]any{"kind": "text", "text": s}}}}}
	}
	reply := func(s string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": 1.0, "result": map[string]any{"kind": "message", "role": "agent",
			"messageId": "m2", "parts": []any{map[string]any{"kind": "text", "text": s}}}}
	}
	if e.Direction == warden.Inbound {
		return map[string]any{
			"benign":    reply("3 meetings"),
			"forbidden": reply("the forbidden word"),
			"secret":    reply("key AKIAIOSFODNN7EXAMPLE"),
		}
	}
	return map[string]any{
		"benign":    send("what is on my calendar"),
		"forbidden": send("say the forbidden word"),
		"secret":    send("key AKIAIOSFODNN7EXAMPLE"),
	}
}

// TestSameDecisionOnEveryPath runs every catalog event, with payloads that
// exercise each view, through `warden eval`, `warden hooks dispatch`, POST
// /api/hooks/dispatch and the Go API, and asserts the same decision and
// reason on all four (issue 7: one core, no bypass).
func TestSameDecisionOnEveryPath(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "four.yaml", fourWayPolicies)
	gd, err := guardian.Open(guardian.Options{Policies: []string{pol}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	srv := httptest.NewServer(gd.Dispatcher())
	defer srv.Close()

	denies, events := 0, 0
	for _, e := range catalog.All() { // both directions of a protocol event
		events++
		for variant, p := range fourWayPayloads(e) {
			payload, _ := json.Marshal(p)
			t.Run(e.Name+"/"+e.Direction+"/"+variant, func(t *testing.T) {
				type answer struct{ decision, reason string }
				var got [4]answer

				// 1. The Go API, mapped as every surface maps a held step.
				m, _ := hooks.DecodePayload(payload)
				out, err := gd.Decide(context.Background(), &warden.Event{Name: e.Name, Payload: m})
				if err != nil {
					t.Fatalf("Go API: %v", err)
				}
				out = out.WithoutHold()
				got[0] = answer{out.Verdict.String(), out.Reason}

				// 2. warden eval.
				code, stdout, stderr := cli(t, string(payload), "eval", "--event", e.Name, "--builtin=false", "--policy", pol)
				var ev struct{ Decision, Reason string }
				if err := json.Unmarshal([]byte(stdout), &ev); err != nil {
					t.Fatalf("eval: exit %d %v\n%s%s", code, err, stdout, stderr)
				}
				got[1] = answer{ev.Decision, ev.Reason}

				// 3. warden hooks dispatch (no trace).
				code, stdout, stderr = cli(t, string(payload), "hooks", "dispatch", e.Name, "--builtin=false", "--policy", pol, "--data", "")
				var dr hooks.Result
				if err := json.Unmarshal([]byte(stdout), &dr); err != nil {
					t.Fatalf("dispatch: exit %d %v\n%s%s", code, err, stdout, stderr)
				}
				got[2] = answer{dr.Decision, dr.DenyReason}

				// 4. POST /api/hooks/dispatch.
				body, _ := json.Marshal(map[string]any{"event": e.Name, "payload": json.RawMessage(payload)})
				resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(body)))
				if err != nil {
					t.Fatal(err)
				}
				var hr hooks.Result
				err = json.NewDecoder(resp.Body).Decode(&hr)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("HTTP dispatch: %d %v", resp.StatusCode, err)
				}
				got[3] = answer{hr.Decision, hr.DenyReason}

				// Dispatch reports a reason only for a deny.
				if got[0].decision != "deny" {
					got[0].reason, got[1].reason = "", ""
				}
				for i, name := range []string{"eval", "CLI dispatch", "HTTP dispatch"} {
					if got[i+1] != got[0] {
						t.Errorf("%s answered %+v, the Go API %+v", name, got[i+1], got[0])
					}
				}
				if variant == "benign" && got[0].decision != "allow" {
					t.Errorf("benign payload: %+v", got[0])
				}
				if got[0].decision == "deny" {
					denies++
				}
			})
		}
	}
	if events < 86 {
		t.Errorf("%d catalog events, want at least 86", events)
	}
	// Every event has at least one payload a policy denies: the views are
	// built for all of them, not only for the AOS methods.
	if denies < 2*events {
		t.Errorf("%d denies over %d events: some views were not built", denies, events)
	}
	t.Logf("%d events, %d denies, the same on all four paths", events, denies)
}

// Issue 7, measurement 1: `warden eval` on a hook event answered allow where
// `warden hooks dispatch` denied the same payload (eval built no views).
func TestEvalDecidesHookEventsLikeDispatch(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "email.yaml", `id: no-external-email
version: "1"
events: ["tool.pre_call"]
when: 'tool.name == "send_email" && !string(tool.args.to).endsWith("@company.io")'
decision: deny
reason: external email is not allowed
`)
	payload := `{"session_id":"s1","tool_name":"send_email","tool_input":{"to":"bob@evil.example"}}`
	code, out, errOut := cli(t, payload, "eval", "--event", "tool.pre_call", "--policy", pol)
	if code != exitDeny || !strings.Contains(out, `"policyId": "no-external-email"`) {
		t.Fatalf("eval: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, payload, "hooks", "dispatch", "tool.pre_call", "--policy", pol, "--data", "")
	if code != exitDeny || !strings.Contains(out, "external email is not allowed") {
		t.Fatalf("dispatch: exit %d\n%s%s", code, out, errOut)
	}
}

// acsPayloads: the same contents in the shape of an ACS-only event's
// payload: a message's content items, a wrapped MCP message, an AgBOM.
func acsPayloads(e catalog.Event) map[string]any {
	content := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "value": s}}}
	}
	switch {
	case e.Family == catalog.FamilyWrappedMCP && e.Name == catalog.ACSMCPPrefix+"tools/call":
		call := func(name string, args map[string]any) map[string]any {
			return map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}
		}
		return map[string]any{
			"benign":    call("calendar", map[string]any{"day": "today"}),
			"wire tool": call("wire_money", map[string]any{"iban": "DE89370400440532013000"}),
			"email":     call("send_email", map[string]any{"to": "bob@example.com"}),
			"secret":    call("notes", map[string]any{"body": "key AKIAIOSFODNN7EXAMPLE"}),
		}
	case e.Name == catalog.MethodUserMessage || e.Name == catalog.MethodAgentResponse:
		return map[string]any{
			"benign":    content("what is on my calendar"),
			"forbidden": content("say the forbidden word"),
			"secret":    content("key AKIAIOSFODNN7EXAMPLE"),
		}
	}
	// The other hooks: agent and session come from the ACS envelope's
	// metadata, which only the ACS surface has; text is read everywhere.
	return map[string]any{
		"benign":        map[string]any{"note": "what is on my calendar"},
		"secret":        map[string]any{"note": "key AKIAIOSFODNN7EXAMPLE"},
		"nested secret": map[string]any{"skill": map[string]any{"definition": []any{"key AKIAIOSFODNN7EXAMPLE"}}},
	}
}
