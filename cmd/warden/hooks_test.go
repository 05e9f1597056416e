package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestHooksEventsTable(t *testing.T) {
	code, out, errOut := cli(t, "", "hooks", "events", "--family", "permission")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "EVENT FAMILY SOURCE SYNC DIRECTION PAYLOAD PATCH" {
		t.Fatalf("table:\n%s", out)
	}
	if !strings.Contains(out, "permission.resolved") || !strings.Contains(out, "async only") {
		t.Errorf("table lacks permission.resolved / async only:\n%s", out)
	}
	_, all, _ := cli(t, "", "hooks", "events")
	if n := len(strings.Split(strings.TrimSpace(all), "\n")) - 1; n != 126 {
		t.Errorf("%d rows, want 126 (25 AOS + 52 AGH + 9 Standard Agents + 40 ACS)", n)
	}
	if !strings.Contains(all, "outbound") || !strings.Contains(all, "filter_messages") {
		t.Errorf("table lacks directions or Standard Agents hooks")
	}
}

func TestHooksEventsJSON(t *testing.T) {
	code, out, errOut := cli(t, "", "hooks", "events", "--sync-only", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var evs []map[string]any
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(evs) != 117 {
		t.Errorf("%d sync-eligible events, want 117 (77 and ACS's 40)", len(evs))
	}
	keys := []string{"name", "family", "source", "sync", "direction", "payload", "patch", "payload_fields", "patch_fields", "fires"}
	for _, e := range evs {
		if e["sync"] != "yes" {
			t.Errorf("%v: sync %v with --sync-only", e["name"], e["sync"])
		}
		for _, k := range keys {
			if _, ok := e[k]; !ok {
				t.Errorf("%v lacks key %s", e["name"], k)
			}
		}
		if len(e) != len(keys) {
			t.Errorf("%v has %d keys, want %d", e["name"], len(e), len(keys))
		}
	}
	_, out, _ = cli(t, "", "hooks", "events", "--family", "tool", "-o", "json")
	if err := json.Unmarshal([]byte(out), &evs); err != nil || len(evs) != 3 || evs[0]["name"] != "tool.pre_call" {
		t.Errorf("--family tool: %v %s", err, out)
	}
}

func TestHooksErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"hooks"}, exitError, "missing subcommand"},
		{[]string{"hooks", "nope"}, exitError, `unknown subcommand "nope"`},
		{[]string{"hooks", "events", "-o", "yaml"}, exitError, "expected table or json"},
		{[]string{"hooks", "events", "--bogus"}, exitError, "bogus"},
		{[]string{"hooks", "events", "extra"}, exitError, "unexpected argument"},
		{[]string{"hooks", "events", "--family", "nope", "-o", "json"}, exitOK, `no family "nope"`},
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
		if tt.code == exitError && strings.Count(strings.TrimSpace(errOut), "\n") > 0 && tt.want != "bogus" {
			t.Errorf("%v: want one error line, got %q", tt.args, errOut)
		}
		if tt.code == exitOK && strings.TrimSpace(out) != "[]" {
			t.Errorf("%v: stdout %q, want []", tt.args, out)
		}
	}
}
