package aosclient

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

// TestAnswers maps the answers of a remote Guardian to a steps/toolCallRequest
// event (seed 001's request).
func TestAnswers(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(t *testing.T) func(req map[string]any) any
		want    warden.Decision
		payload string // the modified payload, JSON; "" for none
		wantErr string
	}{
		{name: "allow", reply: answerWith(map[string]any{"decision": "allow", "message": "allowed"}),
			want: warden.Decision{Verdict: warden.Allow, Reason: "allowed"}},
		{name: "warden-style deny", reply: answerWith(map[string]any{
			"decision": "deny", "message": "denied by policy no-sms: sms is off", "reasoning": "sms is off",
			"reason": "sms is off", "reasonCode": []string{"no-sms", "other"}, "policyId": "no-sms", "policyVersion": "3"}),
			want: warden.Decision{Verdict: warden.Deny, Reason: "sms is off", ReasonCodes: []string{"no-sms", "other"},
				PolicyID: "no-sms", PolicyVersion: "3"}},
		{name: "deny with message and reasonCode only", reply: answerWith(map[string]any{
			"decision": "deny", "message": "blocked", "reasonCode": []string{"pii-guard"}}),
			want: warden.Decision{Verdict: warden.Deny, Reason: "blocked", ReasonCodes: []string{"pii-guard"}, PolicyID: "pii-guard"}},
		{name: "Joch deny (seed001_01)", reply: func(t *testing.T) func(map[string]any) any {
			return seedResponse(t, "seed001_01_response.json")
		}, want: warden.Decision{Verdict: warden.Deny, Reason: "external_write requires approval; approval not granted",
			ReasonCodes: []string{"external-send-requires-approval"},
			PolicyID:    "external-send-requires-approval", PolicyVersion: "v3"}},
		{name: "Joch modify fragment (seed001_02)", reply: func(t *testing.T) func(map[string]any) any {
			return seedResponse(t, "seed001_02_response.json")
		}, want: warden.Decision{Verdict: warden.Modify, Reason: "redacted PII in tool argument"},
			payload: `"inputs":[{"name":"subject","value":"Refund request for order 12345"},{"name":"body","value":"[REDACTED-PII] reported the item never arrived."}]`},
		{name: "warden-style modify (whole modifiedRequest)", reply: func(t *testing.T) func(map[string]any) any {
			return func(req map[string]any) any {
				params := req["params"].(map[string]any)
				tcr := params["toolCallRequest"].(map[string]any)
				tcr["inputs"] = []any{map[string]any{"name": "subject", "value": "[blocked]"}}
				return respond(req, map[string]any{"decision": "modify", "message": "modified by policy redact",
					"reasonCode": []string{"redact"}, "policyId": "redact",
					"modifiedRequest": map[string]any{"jsonrpc": "2.0", "id": req["id"], "method": req["method"], "params": params}})
			}
		}, want: warden.Decision{Verdict: warden.Modify, Reason: "modified by policy redact", ReasonCodes: []string{"redact"}, PolicyID: "redact"},
			payload: `"inputs":[{"name":"subject","value":"[blocked]"}]`},
		{name: "modify without modifiedRequest", reply: answerWith(map[string]any{"decision": "modify", "message": "m"}),
			wantErr: "cannot map modify of steps/toolCallRequest back: the answer has no modifiedRequest"},
		{name: "modify changing the method", reply: answerWith(map[string]any{"decision": "modify", "message": "m",
			"modifiedRequest": map[string]any{"method": "steps/message", "params": map[string]any{}}}),
			wantErr: "cannot map modify of steps/toolCallRequest back: modifiedRequest changes the method"},
		{name: "modify with params not an object", reply: answerWith(map[string]any{"decision": "modify", "message": "m",
			"modifiedRequest": map[string]any{"method": "steps/toolCallRequest", "params": "x"}}),
			wantErr: "modifiedRequest.params is not an object"},
		{name: "error object", reply: raw(func(req map[string]any) any {
			return map[string]any{"jsonrpc": "2.0", "id": req["id"], "error": map[string]any{"code": -32602, "message": "invalid params: params.context"}}
		}), wantErr: "remote guardian error -32602: invalid params: params.context"},
		{name: "mismatched id", reply: raw(func(req map[string]any) any {
			return map[string]any{"jsonrpc": "2.0", "id": "someone-else", "result": map[string]any{"decision": "allow", "message": "ok"}}
		}), wantErr: `answer id "someone-else" does not match request id`},
		{name: "numeric id", reply: raw(func(req map[string]any) any {
			return map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"decision": "allow", "message": "ok"}}
		}), wantErr: "does not match request id"},
		{name: "no jsonrpc", reply: raw(func(req map[string]any) any {
			return map[string]any{"id": req["id"], "result": map[string]any{"decision": "allow"}}
		}), wantErr: "not a JSON-RPC 2.0 response"},
		{name: "neither result nor error", reply: raw(func(req map[string]any) any {
			return map[string]any{"jsonrpc": "2.0", "id": req["id"]}
		}), wantErr: "neither result nor error"},
		{name: "unknown decision", reply: answerWith(map[string]any{"decision": "maybe", "message": "?"}),
			wantErr: `unknown decision "maybe"`},
		{name: "missing decision", reply: answerWith(map[string]any{"message": "?"}),
			wantErr: `unknown decision ""`},
		{name: "malformed result", reply: answerWith(map[string]any{"decision": "deny", "reasonCode": "not-a-list"}),
			wantErr: "malformed result"},
		{name: "batch answer", reply: raw(func(req map[string]any) any { return []any{respond(req, map[string]any{"decision": "allow"})} }),
			wantErr: "answer is not a JSON-RPC response"},
		{name: "garbage", reply: raw(func(map[string]any) any { return "<html>oops</html>" }),
			wantErr: "answer is not a JSON-RPC response: <html>oops</html>"},
		{name: "empty", reply: raw(func(map[string]any) any { return "" }),
			wantErr: "answer is not a JSON-RPC response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuardian(t, tt.reply(t))
			ev := seedEvent(t, "seed001_00_steps_toolCallRequest.json", warden.SurfaceAOS)
			d, err := decide(t, g.URL, ev)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			req := g.lastRequest()
			if req["method"] != "steps/toolCallRequest" || req["jsonrpc"] != "2.0" {
				t.Errorf("request = %v", req)
			}
			if jsonText(t, req["params"]) != jsonText(t, ev.Payload) {
				t.Errorf("params sent = %s, want the payload", jsonText(t, req["params"]))
			}
			got := d
			got.Payload = nil
			if jsonText(t, got) != jsonText(t, tt.want) {
				t.Errorf("decision = %s\nwant       %s", jsonText(t, got), jsonText(t, tt.want))
			}
			if tt.payload == "" {
				if d.Payload != nil {
					t.Errorf("payload = %s, want none", jsonText(t, d.Payload))
				}
				return
			}
			p := jsonText(t, d.Payload)
			if !strings.Contains(p, tt.payload) {
				t.Errorf("payload = %s\nwant it to contain %s", p, tt.payload)
			}
			if get(d.Payload, "toolCallRequest", "executionId") != "69dbf4c3-be33-4694-a9f0-8d3a824c5d5b" ||
				get(d.Payload, "context", "agent", "id") != "support-triage" {
				t.Errorf("modify lost the rest of the payload: %s", p)
			}
			if len(d.Results) != 0 {
				t.Errorf("Results = %v, want none", d.Results)
			}
		})
	}
}

// answerWith answers every request with a success result r.
func answerWith(r map[string]any) func(*testing.T) func(map[string]any) any {
	return func(*testing.T) func(map[string]any) any {
		return func(req map[string]any) any { return respond(req, r) }
	}
}

// raw answers with what f returns, as is.
func raw(f func(map[string]any) any) func(*testing.T) func(map[string]any) any {
	return func(*testing.T) func(map[string]any) any { return f }
}

// TestFreshIDs checks that each request has its own id.
func TestFreshIDs(t *testing.T) {
	seen := map[any]bool{}
	g := newGuardian(t, func(req map[string]any) any {
		seen[req["id"]] = true
		return respond(req, map[string]any{"decision": "allow", "message": "ok"})
	})
	ev := seedEvent(t, "seed001_00_steps_toolCallRequest.json", warden.SurfaceAOS)
	for range 3 {
		if _, err := decide(t, g.URL, ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 3 {
		t.Errorf("ids = %v, want 3 different ones", seen)
	}
}
