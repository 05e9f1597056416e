package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden"
)

// TestSeedExamplesSchemaValid sends every seed example request under allow,
// deny and modify and checks that the answer is schema-valid and echoes the
// id. The schema does not list the A2A hook methods, so modifiedRequest is
// validated separately, and only required to be a valid ASOPRequest when the
// request itself was one.
func TestSeedExamplesSchemaValid(t *testing.T) {
	sc := loadSchemas(t)
	decisions := []struct {
		name string
		d    warden.Decision
	}{
		{"allow", warden.Decision{Verdict: warden.Allow, PolicyID: "p-allow", PolicyVersion: "1", Reason: "fine"}},
		{"deny", warden.Decision{Verdict: warden.Deny, PolicyID: "p-deny", PolicyVersion: "2", Reason: "not fine", ReasonCodes: []string{"p-deny"}}},
		{"modify", warden.Decision{Verdict: warden.Modify, PolicyID: "p-mod", PolicyVersion: "3", Reason: "changed", ReasonCodes: []string{"p-mod"}}},
	}
	for _, ex := range loadExamples(t) {
		reqErr := validate(sc.request, ex.body)
		if why, known := invalidSeeds[ex.name]; known != (reqErr != nil) {
			t.Errorf("seed %s: schema error %v; expected invalid: %v (%s)", ex.name, reqErr, known, why)
		} else if reqErr != nil {
			t.Logf("seed %s is not itself a valid ASOPRequest (%s): %v", ex.name, why, firstLine(reqErr))
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(ex.body, &req); err != nil {
			t.Fatal(err)
		}
		for _, dc := range decisions {
			t.Run(ex.name+"/"+dc.name, func(t *testing.T) {
				h, st := newTestHandler(fixed(dc.d))
				resp := h.Handle(context.Background(), ex.body)
				if resp == nil {
					t.Fatal("no response")
				}
				var got struct {
					ID     json.RawMessage `json:"id"`
					Result map[string]any  `json:"result"`
					Error  any             `json:"error"`
				}
				if err := json.Unmarshal(resp, &got); err != nil {
					t.Fatalf("response is not JSON: %v\n%s", err, resp)
				}
				if got.Error != nil {
					t.Fatalf("error response: %s", resp)
				}
				if !bytes.Equal(got.ID, req.ID) {
					t.Errorf("id = %s, want %s", got.ID, req.ID)
				}
				if req.Method == MethodPing {
					if err := validate(sc.ping, resp); err != nil {
						t.Errorf("not a PingRequestSuccessResponse: %v\n%s", err, resp)
					}
					return
				}
				if n := len(st.Records()); n != 1 {
					t.Errorf("%d trace records, want 1", n)
				}
				if want := dc.name; got.Result["decision"] != want {
					t.Errorf("decision = %v, want %s", got.Result["decision"], want)
				}
				mr, hasMR := got.Result["modifiedRequest"]
				if hasMR != (dc.name == "modify") {
					t.Errorf("modifiedRequest present = %v with %s", hasMR, dc.name)
				}
				delete(got.Result, "modifiedRequest")
				stripped, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": got.ID, "result": got.Result})
				if err := validate(sc.success, stripped); err != nil {
					t.Errorf("not an ASOPSuccessResponse: %v\n%s", err, resp)
				}
				if hasMR {
					mrb, _ := json.Marshal(mr)
					mrErr := validate(sc.request, mrb)
					if mrErr != nil && reqErr == nil {
						t.Errorf("modifiedRequest is not a valid ASOPRequest though the request was: %v\n%s", mrErr, mrb)
					}
					if mrErr == nil && reqErr == nil {
						full, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": got.ID, "result": mergeMR(got.Result, mr)})
						if err := validate(sc.success, full); err != nil {
							t.Errorf("not an ASOPSuccessResponse with modifiedRequest: %v", err)
						}
					}
					// Unchanged payload: the modified request is the request.
					var in, out any
					json.Unmarshal(ex.body, &in)
					json.Unmarshal(mrb, &out)
					if !jsonEqual(in, out) {
						t.Errorf("modifiedRequest of an unchanged payload differs from the request:\n got %s\nwant %s", mrb, ex.body)
					}
				}
			})
		}
	}
}

// invalidSeeds are the seed examples that are not themselves valid
// ASOPRequests under aos_schema.json (with its reference and brace flaws
// fixed, see loadSchemas), and why.
var invalidSeeds = map[string]string{
	"seed000_08_protocols_MCP_outbound": "MCP message as params itself; the schema requires params.message",
	"seed000_09_protocols_MCP_inbound":  "MCP message as params itself; the schema requires params.message",
	"seed001_00_steps_toolCallRequest":  "context.agent has no instructions, which the schema's Agent requires",
	"seed004_00_message_stream":         "message/stream is not an ASOPRequest method (the schema lists no A2A hook methods)",
	"seed004_01_message_stream":         "message/stream is not an ASOPRequest method (the schema lists no A2A hook methods)",
	"seed004_02_message_stream":         "message/stream is not an ASOPRequest method (the schema lists no A2A hook methods)",
	"seed004_03_message_stream":         "message/stream is not an ASOPRequest method (the schema lists no A2A hook methods)",
}

func mergeMR(r map[string]any, mr any) map[string]any {
	m := make(map[string]any, len(r)+1)
	for k, v := range r {
		m[k] = v
	}
	m["modifiedRequest"] = mr
	return m
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func firstLine(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// TestJochResponses compares warden's deny and modify answers for
// seed001_00 with Joch's (seed001_01/02_response.json). Joch's
// modifiedRequest is the params fragment; warden's is the whole request.
func TestJochResponses(t *testing.T) {
	body := readExample(t, "seed001_00_steps_toolCallRequest")
	var joch struct {
		Result map[string]any `json:"result"`
	}

	t.Run("deny", func(t *testing.T) {
		json.Unmarshal(readExample(t, "seed001_01_response"), &joch)
		h, _ := newTestHandler(fixed(warden.Decision{
			Verdict: warden.Deny, Reason: joch.Result["reason"].(string),
			PolicyID: joch.Result["policyId"].(string), PolicyVersion: joch.Result["policyVersion"].(string),
			ReasonCodes: []string{joch.Result["policyId"].(string)},
		}))
		got := decodeJSON(t, h.Handle(context.Background(), body)).(map[string]any)
		if got["id"] != "13fa8d6f-8f9f-4d01-ba6b-db99d84d77de" {
			t.Errorf("id = %v", got["id"])
		}
		res := got["result"].(map[string]any)
		for _, k := range []string{"decision", "reason", "policyId", "policyVersion"} {
			if res[k] != joch.Result[k] {
				t.Errorf("%s = %v, want %v", k, res[k], joch.Result[k])
			}
		}
		want := "denied by policy external-send-requires-approval: external_write requires approval; approval not granted"
		if res["message"] != want {
			t.Errorf("message = %q, want %q", res["message"], want)
		}
	})

	t.Run("modify", func(t *testing.T) {
		joch.Result = nil
		json.Unmarshal(readExample(t, "seed001_02_response"), &joch)
		redact := warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
			p := payload.Clone(ev.Payload)
			in := p["toolCallRequest"].(map[string]any)["inputs"].([]any)[1].(map[string]any)
			in["value"] = strings.Replace(in["value"].(string), "Customer reports", "[REDACTED-PII] reported", 1)
			return warden.Decision{Verdict: warden.Modify, Payload: p, Reason: "redacted PII in tool argument",
				PolicyID: "redact-pii", PolicyVersion: "1"}, nil
		})
		h, st := newTestHandler(redact)
		got := decodeJSON(t, h.Handle(context.Background(), body)).(map[string]any)
		res := got["result"].(map[string]any)
		if res["decision"] != "modify" || res["reason"] != joch.Result["reason"] {
			t.Errorf("decision, reason = %v, %v", res["decision"], res["reason"])
		}
		mr := res["modifiedRequest"].(map[string]any)
		if mr["jsonrpc"] != "2.0" || mr["id"] != got["id"] || mr["method"] != MethodToolCallRequest {
			t.Errorf("modifiedRequest envelope = %v %v %v", mr["jsonrpc"], mr["id"], mr["method"])
		}
		inputs := mr["params"].(map[string]any)["toolCallRequest"].(map[string]any)["inputs"]
		if want := joch.Result["modifiedRequest"].(map[string]any)["inputs"]; !jsonEqual(inputs, want) {
			t.Errorf("modifiedRequest.params.toolCallRequest.inputs = %v, want (Joch) %v", inputs, want)
		}
		rec := st.Records()[0]
		if rec.Decision != "modify" || !strings.Contains(string(rec.Output), "[REDACTED-PII]") {
			t.Errorf("trace record: decision %s output %s", rec.Decision, rec.Output)
		}
	})
}
