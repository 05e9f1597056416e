package policy

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

func jsonMap(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPointer(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"", []string{}, false},
		{"/", []string{""}, false},
		{"/a/b", []string{"a", "b"}, false},
		{"/a~1b/c~0d", []string{"a/b", "c~d"}, false},
		{"a", nil, true},
		{"/a~2", nil, true},
		{"/a~", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parsePointer(tc.in)
			if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want)) {
				t.Fatalf("parsePointer(%q) = %q, %v", tc.in, got, err)
			}
			if !tc.err && pointerString(got) != tc.in && tc.in != "/" {
				t.Errorf("round trip %q", pointerString(got))
			}
		})
	}
}

func TestModifyOps(t *testing.T) {
	const payload = `{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"},
		{"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}]},
		"reasoning": "send it", "context": {"user": {"email": "alice@example.com"}}}`
	tests := []struct {
		name, ops string
		want      string // JSON of the resulting payload; "" = unchanged (allow)
		err       string // evaluation error
	}{
		{"set replaces", `- set: {path: /toolCallRequest/inputs/0/value, value: '"[blocked]"'}`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "[blocked]"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}]}, "reasoning": "send it", "context": {"user": {"email": "alice@example.com"}}}`, ""},
		{"set adds member and appends", "- set: {path: /extra, value: '{\"n\": 1, \"l\": [true, null, 2.5], \"u\": 3u}'}\n- set: {path: /toolCallRequest/inputs/-, value: '{\"name\": \"cc\"}'}",
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}, {"name": "cc"}]}, "reasoning": "send it", "context": {"user": {"email": "alice@example.com"}}, "extra": {"n": 1, "l": [true, null, 2.5], "u": 3}}`, ""},
		{"set from payload", `- set: {path: /reasoning, value: 'payload.reasoning.upperAscii() + " " + tool.name'}`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}]}, "reasoning": "SEND IT send_email", "context": {"user": {"email": "alice@example.com"}}}`, ""},
		{"set same value is nothing", `- set: {path: /reasoning, value: '"send it"'}`, "", ""},
		{"set missing parent", `- set: {path: /nope/x, value: '1'}`, "", `path /nope: no member "nope"`},
		{"set bad index", `- set: {path: /toolCallRequest/inputs/5, value: '1'}`, "", "array index 5 out of range"},
		{"set no JSON form", `- set: {path: /x, value: 'duration("1s")'}`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}]}, "reasoning": "send it", "context": {"user": {"email": "alice@example.com"}}, "x": "1s"}`, ""},
		{"patch list", `- patch: '[{"op": "remove", "path": "/reasoning"}, {"op": "add", "path": "/toolCallRequest/x", "value": 1}]'`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}], "x": 1}, "context": {"user": {"email": "alice@example.com"}}}`, ""},
		{"patch string", `- patch: '''[{"op": "replace", "path": "/reasoning", "value": "x"}]'''`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE"}]}, "reasoning": "x", "context": {"user": {"email": "alice@example.com"}}}`, ""},
		{"patch test fails", `- patch: '[{"op": "test", "path": "/reasoning", "value": "other"}]'`, "", "patch: "},
		{"patch not object", `- patch: '[{"op": "replace", "path": "", "value": [1]}]'`, "", "must stay a JSON object"},
		{"redact everything but context", `- redact: [email, credit_card]`,
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "[REDACTED:email]"}, {"name": "body", "value": "card [REDACTED:credit_card], key AKIAIOSFODNN7EXAMPLE"}]}, "reasoning": "send it", "context": {"user": {"email": "alice@example.com"}}}`, ""},
		{"redact paths", "- redact: [secrets, email]\n  paths: [/toolCallRequest/inputs/1/value, /context, /missing]",
			`{"toolCallRequest": {"inputs": [{"name": "to", "value": "bob@example.com"}, {"name": "body", "value": "card 4111 1111 1111 1111, key [REDACTED:aws_access_key]"}]}, "reasoning": "send it", "context": {"user": {"email": "[REDACTED:email]"}}}`, ""},
		{"redact nothing found", `- redact: [ssn]`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "id: m\nversion: \"1\"\nevents: [e]\ndecision: modify\nmodify:\n" + indent(tc.ops)
			s := mustLoad(t, src)
			ev := &warden.Event{Name: "e", Payload: jsonMap(t, payload), Tool: warden.Tool{Name: "send_email"}}
			d := decide(t, s, Options{}, ev)
			if !reflect.DeepEqual(ev.Payload, jsonMap(t, payload)) {
				t.Fatal("event payload mutated")
			}
			switch {
			case tc.err != "":
				if d.Verdict != warden.Deny || !strings.Contains(d.Results[0].Error, tc.err) {
					t.Fatalf("got %v error %q, want deny with %q", d.Verdict, d.Results[0].Error, tc.err)
				}
			case tc.want == "":
				if d.Verdict != warden.Allow || d.Reason != "nothing to modify" {
					t.Fatalf("got %v %q, want allow (nothing to modify)", d.Verdict, d.Reason)
				}
			default:
				if d.Verdict != warden.Modify || !reflect.DeepEqual(d.Payload, jsonMap(t, tc.want)) {
					got, _ := json.Marshal(d.Payload)
					t.Fatalf("got %v %s", d.Verdict, got)
				}
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

func TestModifySeesEventViews(t *testing.T) {
	s := mustLoad(t, `
id: m
version: "1"
events: [e]
decision: modify
reasonExpr: '"for " + user.email'
modify:
  - set: {path: /who, value: 'user.email + "/" + agent.id'}
`)
	ev := &warden.Event{Name: "e", User: warden.User{Email: "a@b.c"}, Agent: warden.Agent{ID: "ag"}}
	d, _ := NewEngine(s, Options{}).Decide(context.Background(), ev)
	if d.Verdict != warden.Modify || d.Payload["who"] != "a@b.c/ag" || d.Reason != "for a@b.c" || ev.Payload != nil {
		t.Fatalf("%+v", d)
	}
}
