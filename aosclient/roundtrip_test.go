package aosclient

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/catalog"
)

// TestAgainstWarden uses warden's own AOS endpoint as the remote Guardian:
// every request the client builds must pass its validation, and its
// deny and modify answers must map back.
func TestAgainstWarden(t *testing.T) {
	// The remote chain denies tool "shell", rewrites every other tool
	// call's inputs and every message's text, and allows the rest.
	remote := warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		switch {
		case ev.Tool.Name == "shell":
			return warden.Decision{Verdict: warden.Deny, Reason: "no shell", PolicyID: "no-shell", PolicyVersion: "2",
				ReasonCodes: []string{"no-shell"}}, nil
		case ev.Name == aos.MethodToolCallRequest:
			p := payload.Clone(ev.Payload)
			p["toolCallRequest"].(map[string]any)["inputs"] = []any{map[string]any{"name": "path", "value": "/safe"}}
			return warden.Decision{Verdict: warden.Modify, Payload: p, PolicyID: "rewrite"}, nil
		case ev.Name == aos.MethodMCP && ev.Tool.Name != "":
			p := payload.Clone(ev.Payload)
			p["params"].(map[string]any)["arguments"] = map[string]any{"City": "Paris"}
			return warden.Decision{Verdict: warden.Modify, Payload: p}, nil
		case ev.Name == aos.MethodMessage && ev.Message.Text != "":
			p := payload.Clone(ev.Payload)
			p["message"].(map[string]any)["content"] = []any{map[string]any{"kind": "text", "text": "[checked]"}}
			return warden.Decision{Verdict: warden.Modify, Payload: p}, nil
		}
		return warden.Decision{Verdict: warden.Allow}, nil
	})
	chain := warden.NewChain(warden.Allow, warden.Step{Name: "remote-policy", Handler: remote})
	srv := httptest.NewServer(aos.NewHandler(pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views}), aos.Options{Logf: t.Logf}))
	defer srv.Close()

	tests := []struct {
		name  string
		ev    func(t *testing.T) *warden.Event
		check func(t *testing.T, d warden.Decision)
	}{
		{"tool.pre_call modify", func(*testing.T) *warden.Event { return aghToolEvent("tool.pre_call") },
			func(t *testing.T, d warden.Decision) {
				want(t, d.Verdict, warden.Modify)
				want(t, jsonText(t, d.Payload["tool_input"]), `{"path":"/safe"}`)
				want(t, d.PolicyID, "rewrite")
			}},
		{"tool.pre_call deny", func(*testing.T) *warden.Event {
			ev := aghToolEvent("tool.pre_call")
			ev.Tool.Name = "shell"
			return ev
		}, func(t *testing.T, d warden.Decision) {
			want(t, d.Verdict, warden.Deny)
			want(t, d.Reason, "no shell")
			want(t, d.PolicyID, "no-shell")
			want(t, d.PolicyVersion, "2")
		}},
		{"tool.post_call allow", func(*testing.T) *warden.Event {
			ev := aghToolEvent("tool.post_call")
			ev.Payload["tool_result"] = "ok"
			ev.Tool.ID = "toolu_456" // toolu_123 was the shell call the remote remembers
			return ev
		}, func(t *testing.T, d warden.Decision) { want(t, d.Verdict, warden.Allow) }},
		{"prompt.post_assemble modify", func(*testing.T) *warden.Event {
			return &warden.Event{Name: "prompt.post_assemble", Surface: warden.SurfaceHooks,
				Payload: map[string]any{"prompt": "hello"}}
		}, func(t *testing.T, d warden.Decision) {
			want(t, d.Verdict, warden.Modify)
			want(t, d.Payload["prompt"], "[checked]")
		}},
		{"steps/toolCallRequest seed modify", func(t *testing.T) *warden.Event {
			return seedEvent(t, "seed001_00_steps_toolCallRequest.json", warden.SurfaceAOS)
		}, func(t *testing.T, d warden.Decision) {
			want(t, d.Verdict, warden.Modify)
			want(t, get(d.Payload, "toolCallRequest", "inputs", 0, "value"), "/safe")
			want(t, get(d.Payload, "context", "agent", "id"), "support-triage")
		}},
		{"steps/message from the SDK", func(*testing.T) *warden.Event {
			return &warden.Event{Name: "steps/message", Surface: warden.SurfaceSDK, SessionID: "s",
				Payload: map[string]any{"message": map[string]any{"role": "user", "id": "m1",
					"content": []any{map[string]any{"kind": "text", "text": "hi"}}}}}
		}, func(t *testing.T, d warden.Decision) {
			want(t, d.Verdict, warden.Modify)
			want(t, jsonText(t, d.Payload), `{"message":{"content":[{"kind":"text","text":"[checked]"}],"id":"m1","role":"user"}}`)
		}},
		{"protocols/MCP modify", func(t *testing.T) *warden.Event {
			return seedEvent(t, "seed000_08_protocols_MCP_outbound.json", warden.SurfaceMCP)
		}, func(t *testing.T, d warden.Decision) {
			want(t, d.Verdict, warden.Modify)
			want(t, jsonText(t, get(d.Payload, "params", "arguments")), `{"City":"Paris"}`)
			want(t, get(d.Payload, "params", "name"), "get_appointment_slots")
		}},
		{"A2A message/stream", func(t *testing.T) *warden.Event {
			var req map[string]any
			readJSON(t, "seed004_00_message_stream.json", &req)
			return &warden.Event{Name: "message/stream", Surface: warden.SurfaceA2A, Payload: req}
		}, func(t *testing.T, d warden.Decision) { want(t, d.Verdict, warden.Allow) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, srv.URL, tt.ev(t))
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			tt.check(t, d)
		})
	}
}
