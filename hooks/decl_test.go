package hooks

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parseYAML(t *testing.T, src string) ([]Decl, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	decls, errs := Parse("warden.yaml", doc.Content[0])
	if len(errs) > 0 {
		return decls, errs
	}
	return decls, nil
}

func TestParseRejectsEachInvalidDeclaration(t *testing.T) {
	t.Setenv("HOOK_TOKEN", "t0k")
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown event", "- name: a\n  events: [tool.pre_cal]\n  command: [true]\n", `warden.yaml:2: hooks[0].events[0]: "tool.pre_cal" matches no event in the catalog (did you mean "tool.pre_call"?)`},
		{"unknown event in a block list", "- name: a\n  events:\n    - tool.pre_call\n    - tool.precall\n  command: [true]\n", `warden.yaml:4: hooks[0].events[1]: "tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)`},
		{"sync on async-only", "- name: a\n  events: [message.delta]\n  mode: sync\n  command: [true]\n", `warden.yaml:3: hooks[0].mode: hook "a": mode sync on async-only event message.delta`},
		{"sync by default on async-only glob", "- name: a\n  events: [\"permission.*\"]\n  command: [true]\n", `warden.yaml:2: hooks[0].events: hook "a": mode sync on async-only event permission.`},
		{"unknown handler kind", "- name: a\n  events: [tool.pre_call]\n  grpc: {url: x}\n", `warden.yaml:3: hooks[0]: unknown key "grpc"`},
		{"no handler", "- name: a\n  events: [tool.pre_call]\n", `warden.yaml:1: hooks[0]: hook "a": no handler`},
		{"two handlers", "- name: a\n  events: [tool.pre_call]\n  command: [true]\n  webhook: {url: http://x}\n", `warden.yaml:1: hooks[0]: hook "a": more than one handler kind`},
		{"bad duration", "- name: a\n  events: [tool.pre_call]\n  timeout: 2 seconds\n  command: [true]\n", `warden.yaml:3: hooks[0].timeout: expected a duration of at least 1ns such as 30s, got "2 seconds"`},
		{"when does not compile", "- name: a\n  events: [tool.pre_call]\n  when: 'tool.name =='\n  command: [true]\n", `warden.yaml:3: hooks[0].when: Syntax error`},
		{"bad mode", "- name: a\n  events: [tool.pre_call]\n  mode: maybe\n  command: [true]\n", `warden.yaml:3: hooks[0].mode: expected sync or async, got "maybe"`},
		{"bad failure", "- name: a\n  events: [tool.pre_call]\n  failure: shut\n  command: [true]\n", `warden.yaml:3: hooks[0].failure: expected closed or open, got "shut"`},
		{"unset secret", "- name: a\n  events: [tool.pre_call]\n  webhook: {url: \"http://x\", headers: {Authorization: \"Bearer ${NO_SUCH_VAR_X}\"}}\n", `warden.yaml:3: hooks[0].webhook.headers.Authorization: environment variable NO_SUCH_VAR_X is not set`},
		{"duplicate name", "- name: a\n  events: [tool.pre_call]\n  command: [true]\n- name: a\n  events: [tool.pre_call]\n  command: [true]\n", `warden.yaml:4: hook "a" is declared twice`},
		{"missing name", "- events: [tool.pre_call]\n  command: [true]\n", `warden.yaml:1: hooks[0]: missing name`},
		{"not a list", "name: a\n", `warden.yaml:1: hooks: expected a list`},
		{"empty command", "- name: a\n  events: [tool.pre_call]\n  command: []\n", `warden.yaml:3: hooks[0].command: expected a non-empty list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant containing %q", err, tt.want)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	t.Setenv("SIEM_TOKEN", "s3cret")
	decls, err := parseYAML(t, `
- name: rewrite-paths
  events: [tool.pre_call]
  mode: sync
  when: 'tool.name == "edit_file"'
  priority: 10
  timeout: 2s
  failure: closed
  command: [python3, hooks/rewrite.py]
- name: siem
  events: ["tool.post_call", "permission.*"]
  mode: async
  webhook: {url: "http://127.0.0.1:9100/hook", headers: {Authorization: "Bearer ${SIEM_TOKEN}"}}
- name: secteam
  events: ["steps/*", "protocols/*"]
  failure: open
  aos: {url: "http://127.0.0.1:9000/aos"}
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(decls) != 3 {
		t.Fatalf("%d decls", len(decls))
	}
	if d := decls[0]; d.Kind != KindCommand || d.Priority != 10 || d.Timeout.String() != "2s" || d.When == nil || d.Async || d.Line != 2 {
		t.Errorf("rewrite-paths: %+v", d)
	}
	if d := decls[1]; d.Kind != KindWebhook || !d.Async || d.Headers["Authorization"] != "Bearer s3cret" || !d.Matches("permission.denied") {
		t.Errorf("siem: %+v", d)
	}
	if d := decls[2]; d.Kind != KindAOS || d.Failure.String() != "open" || !d.Matches("steps/toolCallRequest") || d.Matches("tool.pre_call") {
		t.Errorf("secteam: %+v", d)
	}
}

// A hook may be declared on the A2A methods the proxy governs beyond the
// catalog's seven (tasks/list, ...), as a policy may.
func TestDeclOnProxyOnlyA2AMethods(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("- name: x\n  events: [tasks/list, \"tasks/pushNotificationConfig/*\"]\n  command: [/bin/true]\n"), &doc); err != nil {
		t.Fatal(err)
	}
	if _, errs := Parse("w.yaml", doc.Content[0]); len(errs) > 0 {
		t.Fatal(errs)
	}
}
