package warden_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// readmePolicy matches a ```yaml block of README.md that is a policy (it
// starts with "id: ").
var readmePolicy = regexp.MustCompile("(?ms)^```yaml\n(id: ([a-z0-9-]+)\n.*?)^```\n")

// TestReadmePolicies: the README's example policies are testdata/readme/<id>.yaml
// byte for byte, and they decide as the README says on the AOS endpoint.
func TestReadmePolicies(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmePolicy.FindAllSubmatch(readme, -1)
	var files []string
	for _, b := range blocks {
		file := filepath.Join("testdata", "readme", string(b[2])+".yaml")
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("README policy %s: %v", b[2], err)
		}
		if string(b[1]) != string(want) {
			t.Errorf("README's %s differs from %s:\n%s\nwant\n%s", b[2], file, b[1], want)
		}
		files = append(files, file)
	}
	if len(files) != 2 {
		t.Fatalf("found %d policies in README.md (%v), want no-external-email and redact-cards", len(files), files)
	}
	var names []string
	for _, e := range catalog.All() {
		names = append(names, e.Name)
	}
	set, err := policy.LoadSet(policy.Spec{Paths: files, Events: names})
	if err != nil {
		t.Fatal(err)
	}
	// The engine itself says ask; the AOS wire has no ask yet.
	engine := policy.NewEngine(set, policy.Options{})
	d, err := engine.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Surface: warden.SurfaceSDK,
		Payload: map[string]any{}, Tool: warden.Tool{Name: "send_email", Args: map[string]any{"to": "bob@evil.example"}}})
	if err != nil || d.Verdict != warden.Ask || d.PolicyID != "no-external-email" {
		t.Fatalf("engine: %v by %s (%v), want ask by no-external-email", d.Verdict, d.PolicyID, err)
	}
	chain := warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: engine})
	h := aos.NewHandler(pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views, Store: storetest.NewMem()}), aos.Options{Logf: t.Logf})

	toolCall := func(tool, reasoning string, inputs ...string) string {
		var in []map[string]string
		for i := 0; i+1 < len(inputs); i += 2 {
			in = append(in, map[string]string{"name": inputs[i], "value": inputs[i+1]})
		}
		params := map[string]any{"toolCallRequest": map[string]any{"executionId": "ex-1", "toolId": tool, "inputs": in},
			"context": map[string]any{"session": map[string]any{"id": "readme"}}}
		if reasoning != "" {
			params["reasoning"] = reasoning
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "steps/toolCallRequest", "params": params})
		return string(b)
	}
	tests := []struct {
		name, req, decision, policy string
		contains, lacks             []string
	}{
		{name: "external email needs approval (ask: on the AOS wire a deny with approval_required)",
			req: toolCall("send_email", "", "to", "bob@evil.example", "body", "hi"), decision: "deny",
			policy: "no-external-email", contains: []string{`"approval_required"`, "external email requires approval"}},
		{name: "internal email is allowed", req: toolCall("send_email", "", "to", "amy@company.io"), decision: "allow"},
		{name: "a call without to is allowed, not an error", req: toolCall("send_email", "", "subject", "hi"), decision: "allow",
			lacks: []string{"evaluation error"}},
		{name: "an agent answer with a card is redacted",
			req: `{"jsonrpc":"2.0","id":2,"method":"steps/message","params":{"message":{"role":"agent","id":"m1",
				"content":[{"kind":"text","text":"Your card 4111 1111 1111 1111 is on file."}]},"context":{}}}`,
			decision: "modify", policy: "redact-cards",
			contains: []string{"Your card [REDACTED:credit_card] is on file."}, lacks: []string{"4111"}},
		{name: "a tool call with a card and no reasoning is redacted, not denied",
			req: toolCall("pay", "", "card", "4111 1111 1111 1111"), decision: "modify", policy: "redact-cards",
			contains: []string{`"value":"[REDACTED:credit_card]"`}, lacks: []string{"4111", "evaluation error"}},
		{name: "a tool call with a card and reasoning loses the reasoning",
			req: toolCall("pay", "pay with the card on file", "card", "4111 1111 1111 1111"), decision: "modify", policy: "redact-cards",
			contains: []string{`"value":"[REDACTED:credit_card]"`}, lacks: []string{"4111", "card on file"}},
		{name: "a tool call without a card or reasoning is allowed", req: toolCall("search", "", "q", "weather"), decision: "allow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.Handle(context.Background(), []byte(tc.req))
			var r struct {
				Result struct {
					Decision string   `json:"decision"`
					PolicyID string   `json:"policyId"`
					Reasons  []string `json:"reasonCode"`
				} `json:"result"`
			}
			if err := json.Unmarshal(resp, &r); err != nil {
				t.Fatalf("%s: %v", resp, err)
			}
			if r.Result.Decision != tc.decision || r.Result.PolicyID != tc.policy {
				t.Fatalf("decision %s by %q, want %s by %q:\n%s", r.Result.Decision, r.Result.PolicyID, tc.decision, tc.policy, resp)
			}
			for _, s := range tc.contains {
				if !strings.Contains(string(resp), s) {
					t.Errorf("response lacks %s:\n%s", s, resp)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(string(resp), s) {
					t.Errorf("response has %s:\n%s", s, resp)
				}
			}
		})
	}
}
