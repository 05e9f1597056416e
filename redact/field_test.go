package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
)

// A secret known by its key — an object member named like a credential, or
// the value of a name/value pair — is redacted in a record's JSON like a
// detector match, with the api_key kind; secret-named keys without a
// credential, and credentials under other keys, are kept.
func TestJSONFields(t *testing.T) {
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	const v = "Zx8fQ2mP9wLk3Rt7Vb1N"
	cases := []struct {
		name, in string
		kinds    []string
		keep     []string
	}{
		{"member", `{"url":"https://api.example.com","api_key":"` + v + `"}`, []string{"api_key"}, []string{`"api_key":"[REDACTED:api_key:`, `"url":"https://api.example.com"`}},
		{"camel", `{"apiKey": "` + v + `", "n": 1}`, []string{"api_key"}, []string{`"n": 1`}},
		{"escaped key", `{"pass\u0077ord":"` + v + `"}`, []string{"api_key"}, nil},
		{"bearer", `{"headers":{"Authorization":"Bearer ` + v + `"}}`, []string{"api_key"}, []string{`"Bearer [REDACTED:api_key:`}},
		{"aos input", `{"inputs":[{"name":"to","value":"ops"},{"name":"password","value":"` + v + `"}]}`, []string{"api_key"}, []string{`"value":"ops"`}},
		{"value first", `[{"value":"` + v + `","name":"token"}]`, []string{"api_key"}, []string{`"name":"token"`}},
		{"key pair", `{"tags":[{"key":"secret","value":"` + v + `"}]}`, []string{"api_key"}, nil},
		{"known format", `{"token":"AKIAIOSFODNN7EXAMPLE"}`, []string{"aws_access_key"}, nil},
		{"two", `{"a":{"token":"` + v + `"},"b":[{"name":"x-api-key","value":"9f8e7d6c5b4a39281706f5e4d3c2b1a0"}]}`, []string{"api_key", "api_key"}, nil},
		{"not a credential", `{"max_tokens":100,"token":"abc","password":"","tokens":["` + v + `"],"token_count":12,"pageToken":"` + v + `","query":"` + v + `"}`, nil, []string{v}},
		{"pair without credential name", `{"inputs":[{"name":"body","value":"` + v + `"}]}`, nil, []string{v}},
		{"array under key", `{"api_key":["` + v + `"]}`, nil, []string{v}},
		{"number", `{"api_key":12345678901234567890}`, nil, []string{"12345678901234567890"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkJSON(t, r, []byte(c.in), c.kinds, c.keep)
			if c.kinds != nil && strings.Contains(string(got), v) {
				t.Errorf("secret left in %s", got)
			}
		})
	}
}

// Filter redacts the step's names (tool, event) and reason codes too, as
// the rest of the record, without writing into the outcome's slices; ids
// are kept.
func TestFilterNames(t *testing.T) {
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	codes := []string{"deny", "code AKIAIOSFODNN7EXAMPLE"}
	rec := &audit.Record{Tool: "AKIAIOSFODNN7EXAMPLE", Event: "protocols/MCP/ghp_0123456789abcdefghijklmnopqrstuvwxyz",
		SessionID: "s-AKIAIOSFODNN7EXAMPLE", AgentID: "agent-1", ReasonCodes: codes, Input: json.RawMessage(`{}`)}
	r.Filter(rec)
	if !strings.HasPrefix(rec.Tool, "[REDACTED:aws_access_key:") || !strings.HasPrefix(rec.Event, "protocols/MCP/[REDACTED:github_token:") {
		t.Errorf("tool %q, event %q", rec.Tool, rec.Event)
	}
	if rec.ReasonCodes[0] != "deny" || !strings.HasPrefix(rec.ReasonCodes[1], "code [REDACTED:aws_access_key:") {
		t.Errorf("reason codes %q", rec.ReasonCodes)
	}
	if codes[1] != "code AKIAIOSFODNN7EXAMPLE" {
		t.Errorf("the outcome's reason codes were written: %q", codes)
	}
	if rec.SessionID != "s-AKIAIOSFODNN7EXAMPLE" {
		t.Errorf("an id was changed: %q", rec.SessionID)
	}
	// The same name gets the same replacement: redacted names still group.
	again := &audit.Record{Tool: "AKIAIOSFODNN7EXAMPLE"}
	r.Filter(again)
	if again.Tool != rec.Tool {
		t.Errorf("tags differ: %q %q", again.Tool, rec.Tool)
	}
	// A field secret alone (no detector match in any text) is found.
	rec = &audit.Record{Tool: "http_post", Input: json.RawMessage(`{"tool_input":{"api_key":"Zx8fQ2mP9wLk3Rt7Vb1N"}}`)}
	r.Filter(rec)
	if strings.Contains(string(rec.Input), "Zx8fQ2mP9wLk3Rt7Vb1N") || rec.Tool != "http_post" {
		t.Errorf("record %s %s", rec.Tool, rec.Input)
	}
}
