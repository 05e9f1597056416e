package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden"
)

// writeFile writes content to dir/name and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustLoad loads policies from YAML source (one file).
func mustLoad(t testing.TB, src string) *Set {
	t.Helper()
	p := writeFile(t, t.TempDir(), "p.yaml", src)
	s, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// toolCall is a steps/toolCallRequest-like event.
func toolCall(tool string, args map[string]any) *warden.Event {
	inputs := []any{}
	for k, v := range args {
		inputs = append(inputs, map[string]any{"name": k, "value": v})
	}
	return &warden.Event{
		Name:    "steps/toolCallRequest",
		Surface: warden.SurfaceAOS,
		Payload: map[string]any{
			"toolCallRequest": map[string]any{"executionId": "e1", "toolId": "t-" + tool, "inputs": inputs},
			"context": map[string]any{"agent": map[string]any{"id": "agent-1", "name": "helper"},
				"session": map[string]any{"id": "s1"}},
		},
		Agent:     warden.Agent{ID: "agent-1", Name: "helper", Model: "gpt-x"},
		User:      warden.User{ID: "u1", Email: "alice@company.io"},
		SessionID: "s1", TurnID: "turn-1", StepID: "step-1",
		Tool: warden.Tool{Name: tool, ID: "t-" + tool, Args: args},
	}
}

// message is a steps/message event with the given role and text.
func message(role, text string) *warden.Event {
	return &warden.Event{
		Name: "steps/message", Surface: warden.SurfaceAOS,
		Payload: map[string]any{"message": map[string]any{"role": role, "content": text}},
		Message: warden.Message{Role: role, Text: text},
	}
}
