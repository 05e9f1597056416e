package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// runner is what command and webhook handlers have in common: the payload
// in, a patch out.
type runner interface {
	Run(ctx context.Context, payload []byte) (patch []byte, err error)
}

// patchHandler adapts a runner to warden.Handler: the patch it returns
// becomes the hook's decision.
type patchHandler struct {
	name, kind string
	run        runner
}

var _ warden.Handler = (*patchHandler)(nil)

func (h *patchHandler) Decide(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
	in := ev.Raw
	if in == nil {
		var err error
		if in, err = json.Marshal(ev.Payload); err != nil {
			return warden.Decision{}, fmt.Errorf("encoding the payload: %w", err)
		}
	}
	t0 := time.Now()
	out, err := h.run.Run(ctx, in)
	if err != nil {
		return warden.Decision{}, err
	}
	d, err := applyPatch(ev, out)
	if err != nil {
		return warden.Decision{}, err
	}
	d.Results = []warden.Result{{
		Guardian: h.name, Kind: h.kind, Decision: d.Verdict.String(), Mode: warden.Enforce.String(),
		Reason: d.Reason, LatencyUS: time.Since(t0).Microseconds(), Patch: compact(out),
	}}
	return d, nil
}

// compact returns patch as stored in the trace: nil when empty.
func compact(patch []byte) json.RawMessage {
	patch = bytes.TrimSpace(patch)
	if len(patch) == 0 {
		return nil
	}
	return json.RawMessage(patch)
}

// ApplyPatch turns a hook's output (what a command printed, what a webhook
// answered) into the decision the chain applies about ev, exactly as a
// command or webhook hook's output is applied when the hook runs (see
// applyPatch). `warden replay` applies a recorded hook's patch with it
// instead of running the hook again.
func ApplyPatch(ev *warden.Event, patch []byte) (warden.Decision, error) {
	return applyPatch(ev, patch)
}

// applyPatch turns a hook's output into a decision about ev:
//   - empty output, {} and null: no change (allow) — null is the Standard
//     Agents "unchanged";
//   - {"deny": true, "deny_reason": ...}: deny;
//   - an AGH-style object: its fields replace the payload's (the guard
//     checks them against the event's patch type);
//   - for Standard Agents events, the return value replaces the event's one
//     patch field (the message list, the message, the tool result).
func applyPatch(ev *warden.Event, patch []byte) (warden.Decision, error) {
	patch = bytes.TrimSpace(patch)
	if len(patch) == 0 || bytes.Equal(patch, []byte("null")) || bytes.Equal(patch, []byte("{}")) {
		return warden.Decision{Verdict: warden.Allow}, nil
	}
	var v any
	if err := json.Unmarshal(patch, &v); err != nil {
		return warden.Decision{}, fmt.Errorf("patch is not JSON: %w", err)
	}
	e, _ := catalog.Lookup(ev.Name)
	obj, isObj := v.(map[string]any)
	if isObj {
		if deny, _ := obj["deny"].(bool); deny {
			reason, _ := obj["deny_reason"].(string)
			if reason == "" {
				reason = "denied by hook"
			}
			return warden.Decision{Verdict: warden.Deny, Reason: reason}, nil
		}
	}
	next := make(map[string]any, len(ev.Payload)+1)
	for k, x := range ev.Payload {
		next[k] = x
	}
	if e.Source == catalog.Source("standard-agents") && len(e.PatchFields) > 0 {
		next[e.PatchFields[0]] = v
		return warden.Decision{Verdict: warden.Modify, Payload: next}, nil
	}
	if !isObj {
		return warden.Decision{}, fmt.Errorf("patch for %s must be a JSON object, got %s", ev.Name, kindOf(v))
	}
	changed := false
	for k, x := range obj {
		if k == "deny" || k == "deny_reason" {
			continue
		}
		next[k] = x
		changed = true
	}
	if !changed {
		return warden.Decision{Verdict: warden.Allow}, nil
	}
	return warden.Decision{Verdict: warden.Modify, Payload: next}, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
