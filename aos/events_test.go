package aos

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

// wantEvent is the part of an Event a case checks; empty fields must be
// empty in the event too.
type wantEvent struct {
	name, direction, requestID string
	agent                      warden.Agent
	user                       warden.User
	session, turn, step        string
	tool                       warden.Tool
	message                    warden.Message
	reasoning                  string
	payloadKey                 string // a key the payload must have
	rawPrefix                  string // Raw must start with this
}

// rewrite decodes a seed example, lets f change it, and encodes it again.
func rewrite(t *testing.T, name string, f func(req map[string]any)) []byte {
	t.Helper()
	req := decodeJSON(t, readExample(t, name)).(map[string]any)
	f(req)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEvents(t *testing.T) {
	personal := warden.Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Personal assistant", Version: "9889", Provider: "OpenAI"}
	payments := warden.Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Payments agent", Version: "8878", Provider: "OpenAI"}
	azura := warden.User{ID: "8cc6e9bc-6ad5-4b95-8060-300915b1aaba", Email: "user@company.io", Organization: "Azura"}
	const sess1, sess2 = "e4368263-1797-48ac-9ca8-61a6b4ad9ea3", "84c36ebb-83aa-4bc9-8670-7aba4cedc70f"
	smsTool := warden.Tool{ID: "c264f381-10cf-4403-bd11-383014c0fcc6", Name: "send_sms",
		Args: map[string]any{"phone_number": "+337-665-99-06", "conent": "Urgent security alert from Google!!"}}
	mcpTool := warden.Tool{Name: "get_appointment_slots",
		Args: map[string]any{"specialty": "Family Medicine", "datetime": "2025-01-24T15:30:45.123Z", "City": "Berlin"}}
	streamMsg := warden.Message{Role: "user", Text: "write a long paper describing the attached pictures"}
	generator := warden.Agent{ID: "https://cooking-assistant.openai.com/api/v1", Name: "Content generator", Version: "1.0.0", Provider: "OpenAI"}

	withTools := func(req map[string]any) {
		agent := req["params"].(map[string]any)["context"].(map[string]any)["agent"].(map[string]any)
		agent["tools"] = []any{map[string]any{"id": "c264f381-10cf-4403-bd11-383014c0fcc6", "name": "send_sms", "type": "function_call"}}
		agent["model"] = map[string]any{"id": "gpt-4o-2024", "name": "gpt-4o", "provider": map[string]any{"name": "OpenAI"}}
	}
	flatten := func(req map[string]any) {
		p := req["params"].(map[string]any)
		tcr := p["toolCallResult"].(map[string]any)
		delete(p, "toolCallResult")
		p["executionId"], p["result"] = tcr["executionId"], tcr["result"]
	}
	wrapMessage := func(req map[string]any) {
		req["params"] = map[string]any{"message": req["params"], "reasoning": "checking slots"}
	}
	toA2A := func(method string) func(req map[string]any) {
		return func(req map[string]any) {
			req["method"] = method
			req["params"].(map[string]any)["payload"].(map[string]any)["method"] = method
		}
	}

	// Each case sends its requests in order to one handler (so results see
	// their requests) and checks the event of the last one.
	cases := []struct {
		name string
		reqs [][]byte
		want wantEvent
	}{
		{"agentTrigger", [][]byte{readExample(t, "seed000_00_steps_agentTrigger")}, wantEvent{
			name: MethodAgentTrigger, requestID: "ec3485a7-6e51-469f-8901-ae8538d6db9c", agent: personal, session: sess1,
			turn: "f128c460-241f-44a9-b4eb-5e5c4a2f56ea", step: "d87380ae-6b3b-454a-b911-0c1396e2ef68", payloadKey: "trigger", rawPrefix: "{"}},
		{"toolCallRequest/tool name from context.agent.tools", [][]byte{rewrite(t, "seed000_01_steps_toolCallRequest", withTools)}, wantEvent{
			name: MethodToolCallRequest, requestID: "13fa8d6f-8f9f-4d01-ba6b-db99d84d77de",
			agent:   warden.Agent{ID: personal.ID, Name: personal.Name, Version: personal.Version, Provider: "OpenAI", Model: "gpt-4o"},
			session: sess1, turn: "69ef57b8-3993-440d-9493-523914f3f149", step: "9263448a-186a-4c3b-abcf-443feb44a01e", tool: smsTool,
			reasoning: "Detected urgent email that needs the user's attention. I should use the send_sms tool to notify the user.", payloadKey: "toolCallRequest"}},
		{"toolCallRequest/tool name falls back to toolId", [][]byte{readExample(t, "seed001_00_steps_toolCallRequest")}, wantEvent{
			name: MethodToolCallRequest, requestID: "13fa8d6f-8f9f-4d01-ba6b-db99d84d77de",
			agent: warden.Agent{ID: "support-triage", Name: "Support Triage", Version: "14", Provider: "OpenAI"}, session: sess2,
			turn: "69ef57b8-3993-440d-9493-523914f3f149", step: "9263448a-186a-4c3b-abcf-443feb44a01e",
			tool: warden.Tool{ID: "c264f381-10cf-4403-bd11-383014c0fcc6", Name: "c264f381-10cf-4403-bd11-383014c0fcc6",
				Args: map[string]any{"subject": "Refund request for order 12345", "body": "Customer reports the item never arrived."}},
			reasoning: "Customer is eligible for refund. I will create a Zendesk ticket.", payloadKey: "toolCallRequest"}},
		{"toolCallResult/nested, correlated", [][]byte{rewrite(t, "seed000_01_steps_toolCallRequest", withTools), readExample(t, "seed000_02_steps_toolCallResult")}, wantEvent{
			name: MethodToolCallResult, requestID: "9ba7f23b-6280-4f87-9d29-9ef82064f91e", agent: personal, session: sess1,
			turn: "69ef57b8-3993-440d-9493-523914f3f149", step: "9263448a-186a-4c3b-abcf-443feb44a01e", tool: smsTool,
			reasoning: "Sent the user an sms with to notify about the security alert using send_sms tool. My task is completed.", payloadKey: "toolCallResult"}},
		{"toolCallResult/flat, correlated", [][]byte{rewrite(t, "seed000_01_steps_toolCallRequest", withTools), rewrite(t, "seed000_02_steps_toolCallResult", flatten)}, wantEvent{
			name: MethodToolCallResult, requestID: "9ba7f23b-6280-4f87-9d29-9ef82064f91e", agent: personal, session: sess1,
			turn: "69ef57b8-3993-440d-9493-523914f3f149", step: "9263448a-186a-4c3b-abcf-443feb44a01e", tool: smsTool,
			reasoning: "Sent the user an sms with to notify about the security alert using send_sms tool. My task is completed.", payloadKey: "executionId"}},
		{"toolCallResult/uncorrelated", [][]byte{readExample(t, "seed000_02_steps_toolCallResult")}, wantEvent{
			name: MethodToolCallResult, requestID: "9ba7f23b-6280-4f87-9d29-9ef82064f91e", agent: personal, session: sess1,
			turn: "69ef57b8-3993-440d-9493-523914f3f149", step: "9263448a-186a-4c3b-abcf-443feb44a01e",
			reasoning: "Sent the user an sms with to notify about the security alert using send_sms tool. My task is completed.", payloadKey: "toolCallResult"}},
		{"message/user", [][]byte{readExample(t, "seed000_03_steps_message_user")}, wantEvent{
			name: MethodMessage, requestID: "55a8c2d7-0ea3-4cc7-b5e8-c859bf7a612f", agent: payments, user: azura, session: sess2,
			turn: "f31ec273-9272-47dd-8ec4-8b2da695507e", step: "f3a357c4-2257-4cbe-ba16-e6fa2ca4e2ed",
			message: warden.Message{Role: "user", Text: "What is the bank account of Acme Corp?"}, payloadKey: "message"}},
		{"message/agent with citations", [][]byte{readExample(t, "seed000_07_steps_message_agent")}, wantEvent{
			name: MethodMessage, requestID: "716601aa-36eb-4720-ab08-c59b9321aecb", agent: payments, user: azura, session: sess2,
			turn: "083db36a-5ba1-4d37-8c3f-ebc2ec23b96b", step: "fdee9786-1754-4c87-962c-a1ed02918b99",
			message:   warden.Message{Role: "agent", Text: "The bank account of Acme Corp is 000123456789"},
			reasoning: "Found Acme Corp bank account details in Bank Accounts.xlsx. I can respond to the user.", payloadKey: "citations"}},
		{"message/agent with citation (spec spelling)", [][]byte{rewrite(t, "seed000_07_steps_message_agent", func(req map[string]any) {
			p := req["params"].(map[string]any)
			p["citation"] = p["citations"]
			delete(p, "citations")
		})}, wantEvent{
			name: MethodMessage, requestID: "716601aa-36eb-4720-ab08-c59b9321aecb", agent: payments, user: azura, session: sess2,
			turn: "083db36a-5ba1-4d37-8c3f-ebc2ec23b96b", step: "fdee9786-1754-4c87-962c-a1ed02918b99",
			message:   warden.Message{Role: "agent", Text: "The bank account of Acme Corp is 000123456789"},
			reasoning: "Found Acme Corp bank account details in Bank Accounts.xlsx. I can respond to the user.", payloadKey: "citation"}},
		{"memoryContextRetrieval", [][]byte{readExample(t, "seed000_04_steps_memoryContextRetrieval")}, wantEvent{
			name: MethodMemoryContextRetrieval, requestID: "5d5d6170-ffba-4520-9839-0da4c31b5497", agent: payments, user: azura, session: sess2,
			turn: "083db36a-5ba1-4d37-8c3f-ebc2ec23b96b", step: "491fef1e-992d-4503-aadb-e36c935fdeb2",
			reasoning: "I might find these details from previous interactions. I need to look at the conversation history to decide.", payloadKey: "memory"}},
		{"knowledgeRetrieval", [][]byte{readExample(t, "seed000_05_steps_knowledgeRetrieval")}, wantEvent{
			name: MethodKnowledgeRetrieval, requestID: "651aed43-4aca-4226-94fe-66fb77cd6c4a", agent: payments, user: azura, session: sess2,
			turn: "083db36a-5ba1-4d37-8c3f-ebc2ec23b96b", step: "234b6b2f-a2af-45d1-95b9-c16c13dca431",
			reasoning: "I need to find a bank account. I expect this to be available in  Bank Accounts.xlsx file.", payloadKey: "knowledgeStep"}},
		{"memoryStore", [][]byte{readExample(t, "seed000_06_steps_memoryStore")}, wantEvent{
			name: MethodMemoryStore, requestID: "797aad44-7cd1-43c3-a6ec-6536cd295ed9", agent: payments, user: azura, session: sess2,
			turn: "083db36a-5ba1-4d37-8c3f-ebc2ec23b96b", step: "ee33bce7-72b9-4ef7-a464-1f3f70ed7e06",
			reasoning: "I should memorize Acme Corp bank account details for future interactions.", payloadKey: "memory"}},
		{"MCP/outbound tools/call, unwrapped", [][]byte{readExample(t, "seed000_08_protocols_MCP_outbound")}, wantEvent{
			name: MethodMCP, direction: warden.Outbound, requestID: "13fd5c5c-2e82-47db-ac4b-227fffd6683a", tool: mcpTool,
			payloadKey: "method", rawPrefix: `{`}},
		{"MCP/inbound result, unwrapped, correlated", [][]byte{readExample(t, "seed000_08_protocols_MCP_outbound"), readExample(t, "seed000_09_protocols_MCP_inbound")}, wantEvent{
			name: MethodMCP, direction: warden.Inbound, requestID: "e1c93383-e6ca-433c-999d-85cbca53a172", tool: mcpTool, payloadKey: "result"}},
		{"MCP/inbound result, uncorrelated", [][]byte{readExample(t, "seed000_09_protocols_MCP_inbound")}, wantEvent{
			name: MethodMCP, direction: warden.Inbound, requestID: "e1c93383-e6ca-433c-999d-85cbca53a172", payloadKey: "result"}},
		{"MCP/outbound, wrapped in params.message", [][]byte{rewrite(t, "seed000_08_protocols_MCP_outbound", wrapMessage)}, wantEvent{
			name: MethodMCP, direction: warden.Outbound, requestID: "13fd5c5c-2e82-47db-ac4b-227fffd6683a", tool: mcpTool,
			reasoning: "checking slots", payloadKey: "jsonrpc", rawPrefix: `{"id":"15275b01`}},
		{"MCP/inbound, wrapped, correlated", [][]byte{rewrite(t, "seed000_08_protocols_MCP_outbound", wrapMessage), rewrite(t, "seed000_09_protocols_MCP_inbound", wrapMessage)}, wantEvent{
			name: MethodMCP, direction: warden.Inbound, requestID: "e1c93383-e6ca-433c-999d-85cbca53a172", tool: mcpTool,
			reasoning: "checking slots", payloadKey: "result"}},
		{"A2A/outbound message/send, wrapped", [][]byte{rewrite(t, "seed004_01_message_stream", func(req map[string]any) {
			p := req["params"].(map[string]any)
			req["method"] = MethodA2A
			req["params"] = map[string]any{"message": p["payload"], "reasoning": "delegate"}
		})}, wantEvent{
			name: MethodA2A, direction: warden.Outbound, requestID: "56e55ffd-fe11-4c64-b7c9-ddc936dbaed2", message: streamMsg,
			reasoning: "delegate", payloadKey: "params"}},
		{"A2A/outbound message/send, unwrapped", [][]byte{rewrite(t, "seed004_01_message_stream", func(req map[string]any) {
			req["method"] = MethodA2A
			req["params"] = req["params"].(map[string]any)["payload"]
		})}, wantEvent{
			name: MethodA2A, direction: warden.Outbound, requestID: "56e55ffd-fe11-4c64-b7c9-ddc936dbaed2", message: streamMsg, payloadKey: "params"}},
		{"A2A/inbound result message", [][]byte{[]byte(`{"jsonrpc":"2.0","id":7,"method":"protocols/A2A","params":{"message":{"jsonrpc":"2.0","id":2,"result":{"kind":"message","role":"agent","parts":[{"kind":"text","text":"once upon"},{"kind":"text","text":"a time"}]}}}}`)}, wantEvent{
			name: MethodA2A, direction: warden.Inbound, requestID: "7", message: warden.Message{Role: "agent", Text: "once upon\na time"}, payloadKey: "result"}},
		{"A2A hook/message/stream, payload", [][]byte{readExample(t, "seed004_01_message_stream")}, wantEvent{
			name: "message/stream", direction: warden.Outbound, requestID: "56e55ffd-fe11-4c64-b7c9-ddc936dbaed2", agent: generator,
			message: streamMsg, reasoning: "I will deelegate this request to the specialized agent.", payloadKey: "params", rawPrefix: "{"}},
		{"A2A hook/message/stream, server side", [][]byte{readExample(t, "seed004_03_message_stream")}, wantEvent{
			name: "message/stream", direction: warden.Outbound, requestID: "56e55ffd-fe11-4c64-b7c9-ddc936dbaed2",
			agent: warden.Agent{ID: generator.ID, Name: generator.Name, Version: "1.0.0"}, message: streamMsg, payloadKey: "params"}},
		{"A2A hook/message/stream, the A2A request itself", [][]byte{readExample(t, "seed004_00_message_stream")}, wantEvent{
			name: "message/stream", direction: warden.Outbound, requestID: "2", message: streamMsg, payloadKey: "params", rawPrefix: "{"}},
	}
	for _, m := range A2AHookMethods {
		want := wantEvent{name: m, direction: warden.Outbound, requestID: "56e55ffd-fe11-4c64-b7c9-ddc936dbaed2", agent: generator,
			reasoning: "I will deelegate this request to the specialized agent.", payloadKey: "params"}
		if m == "message/send" || m == "message/stream" {
			want.message = streamMsg
		}
		cases = append(cases, struct {
			name string
			reqs [][]byte
			want wantEvent
		}{"A2A hook/" + m, [][]byte{rewrite(t, "seed004_01_message_stream", toA2A(m))}, want})
	}
	cases = append(cases, struct {
		name string
		reqs [][]byte
		want wantEvent
	}{"A2A hook/tasks/get inbound result", [][]byte{[]byte(`{"jsonrpc":"2.0","id":"r1","method":"tasks/get","params":{"payload":{"jsonrpc":"2.0","id":3,"result":{"kind":"task","id":"t1","status":{"state":"completed","message":{"role":"agent","parts":[{"kind":"text","text":"done"}]}}}},"context":{"from":{"agent":{"name":"Story teller","url":"https://api.story.com/v1"},"role":"server"}}}}`)},
		wantEvent{name: "tasks/get", direction: warden.Inbound, requestID: "r1", agent: warden.Agent{ID: "https://api.story.com/v1", Name: "Story teller"},
			message: warden.Message{Role: "agent", Text: "done"}, payloadKey: "result"}})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			h, _ := newTestHandler(rec)
			for _, r := range tc.reqs {
				resp := h.Handle(context.Background(), r)
				if !strings.Contains(string(resp), `"decision":"allow"`) {
					t.Fatalf("response: %s", resp)
				}
			}
			checkEvent(t, rec.last(), tc.want)
		})
	}
}

func checkEvent(t *testing.T, ev *warden.Event, w wantEvent) {
	t.Helper()
	if ev == nil {
		t.Fatal("no event")
	}
	eq := func(field string, got, want any) {
		t.Helper()
		if !jsonEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	eq("Name", ev.Name, w.name)
	eq("Surface", ev.Surface, warden.SurfaceAOS)
	eq("Direction", ev.Direction, w.direction)
	eq("RequestID", ev.RequestID, w.requestID)
	eq("Agent", ev.Agent, w.agent)
	eq("User", ev.User, w.user)
	eq("SessionID", ev.SessionID, w.session)
	eq("TurnID", ev.TurnID, w.turn)
	eq("StepID", ev.StepID, w.step)
	if w.tool.Args == nil {
		w.tool.Args = map[string]any{}
	}
	eq("Tool", ev.Tool, w.tool)
	if ev.Tool.Args == nil {
		t.Error("Tool.Args is nil")
	}
	eq("Message", ev.Message, w.message)
	eq("Reasoning", ev.Reasoning, w.reasoning)
	if _, ok := ev.Payload[w.payloadKey]; !ok {
		t.Errorf("payload has no %q: %v", w.payloadKey, ev.Payload)
	}
	var raw any
	if err := json.Unmarshal(ev.Raw, &raw); err != nil {
		t.Fatalf("Raw is not JSON: %v: %q", err, ev.Raw)
	}
	eq("Raw (decoded) vs Payload", raw, ev.Payload)
	if !strings.HasPrefix(string(ev.Raw), w.rawPrefix) {
		t.Errorf("Raw = %.60s..., want prefix %s", ev.Raw, w.rawPrefix)
	}
	// Normalize rebuilds the same views from the payload.
	n := ev.WithPayload(ev.Payload)
	eq("normalized Tool", n.Tool, ev.Tool)
	eq("normalized Message", n.Message, ev.Message)
	eq("normalized Agent", n.Agent, ev.Agent)
}
