package aosclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden/jsonrpc"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/webhook"
)

// result is an AOS success result (ASOPSuccessResult), with the Joch seed's
// reason, policyId and policyVersion.
type result struct {
	Decision        string          `json:"decision"`
	Message         string          `json:"message"`
	Reasoning       string          `json:"reasoning"`
	Reason          string          `json:"reason"`
	ReasonCode      []string        `json:"reasonCode"`
	PolicyID        string          `json:"policyId"`
	PolicyVersion   string          `json:"policyVersion"`
	ModifiedRequest json.RawMessage `json:"modifiedRequest"`
}

// parseResponse checks that body is a JSON-RPC 2.0 response to the request
// with id and returns its result.
func parseResponse(body []byte, id string) (*result, error) {
	var resp jsonrpc.Envelope
	var version string
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &resp) != nil ||
		resp.JSONRPC != nil && json.Unmarshal(resp.JSONRPC, &version) != nil {
		return nil, fmt.Errorf("answer is not a JSON-RPC response: %s", webhook.Excerpt(body))
	}
	if version != jsonrpc.Version {
		return nil, fmt.Errorf("answer is not a JSON-RPC 2.0 response (jsonrpc %q)", webhook.Excerpt([]byte(version)))
	}
	var got string
	if json.Unmarshal(resp.ID, &got) != nil || got != id {
		return nil, fmt.Errorf("answer id %s does not match request id %q", webhook.Excerpt(resp.ID), id)
	}
	if len(resp.Error) > 0 && !bytes.Equal(resp.Error, []byte("null")) {
		var e struct { // data, of any type, is not read
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(resp.Error, &e) != nil {
			return nil, fmt.Errorf("remote guardian error: malformed error object: %s", webhook.Excerpt(resp.Error))
		}
		return nil, fmt.Errorf("remote guardian error %d: %s", e.Code, webhook.Excerpt([]byte(e.Message)))
	}
	if len(resp.Result) == 0 || bytes.Equal(resp.Result, []byte("null")) {
		return nil, errors.New("answer has neither result nor error")
	}
	var r result
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return nil, fmt.Errorf("malformed result: %v", err)
	}
	return &r, nil
}

// decision maps a result onto a warden decision about ev.
func (r *route) decision(ev *warden.Event, res *result) (warden.Decision, error) {
	d := warden.Decision{
		Reason:        firstNonEmpty(res.Reason, res.Message, res.Reasoning),
		ReasonCodes:   res.ReasonCode,
		PolicyID:      res.PolicyID,
		PolicyVersion: res.PolicyVersion,
	}
	if d.PolicyID == "" && len(res.ReasonCode) > 0 {
		d.PolicyID = res.ReasonCode[0]
	}
	if len(d.ReasonCodes) == 0 && d.PolicyID != "" {
		d.ReasonCodes = []string{d.PolicyID}
	}
	switch res.Decision {
	case "allow":
		d.Verdict = warden.Allow
	case "deny":
		d.Verdict = warden.Deny
	case "modify":
		p, err := r.modified(ev, res.ModifiedRequest)
		if err != nil {
			return warden.Decision{}, fmt.Errorf("cannot map modify of %s back: %w", ev.Name, err)
		}
		d.Verdict, d.Payload = warden.Modify, p
	default:
		return warden.Decision{}, fmt.Errorf("remote guardian answered unknown decision %q (want allow, deny or modify)",
			webhook.Excerpt([]byte(res.Decision)))
	}
	return d, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// modified returns ev's payload as the modifiedRequest mr changes it.
//
// mr is either the whole AOS request (it has params or method) or, as in the Joch seed, a fragment of the step object — for
// steps/toolCallRequest {"inputs": [...]} replaces toolCallRequest.inputs —
// or of params (when it holds the step object's key, or the step has none).
func (r *route) modified(ev *warden.Event, mr json.RawMessage) (map[string]any, error) {
	if len(mr) == 0 || bytes.Equal(mr, []byte("null")) {
		return nil, errors.New("the answer has no modifiedRequest")
	}
	var m map[string]any
	if err := json.Unmarshal(mr, &m); err != nil {
		return nil, errors.New("modifiedRequest is not a JSON object")
	}
	_, hasParams := m["params"]
	_, hasMethod := m["method"]
	if hasParams || hasMethod {
		if meth, ok := m["method"]; ok && meth != r.method {
			return nil, fmt.Errorf("modifiedRequest changes the method to %v", webhook.Excerpt([]byte(fmt.Sprint(meth))))
		}
		params, ok := m["params"].(map[string]any)
		if !ok {
			return nil, errors.New("modifiedRequest.params is not an object")
		}
		return r.fromParams(ev, params)
	}
	return r.fromFragment(ev, m)
}

// fromParams maps the whole modified params back to ev's payload.
func (r *route) fromParams(ev *warden.Event, params map[string]any) (map[string]any, error) {
	switch r.kind {
	case kindStep, kindOther:
		if r.injected {
			delete(params, "context")
		}
		return params, nil
	case kindProtocol, kindA2AHook:
		key := "message"
		if r.kind == kindA2AHook {
			key = "payload"
		}
		if msg, ok := params[key].(map[string]any); ok {
			return msg, nil
		}
		if isRPCMessage(params) {
			return params, nil
		}
		return nil, fmt.Errorf("modifiedRequest.params has no %s object", key)
	}
	return r.toHook(ev, params)
}

// fromFragment merges a fragment into the params sent, then maps those back.
func (r *route) fromFragment(ev *warden.Event, frag map[string]any) (map[string]any, error) {
	switch r.kind {
	case kindProtocol, kindA2AHook:
		return nil, errors.New("a modifiedRequest fragment (no params) is only understood for steps/* methods")
	}
	params := payload.Clone(r.sent)
	target := params
	if _, isParams := frag[r.stepKey]; !isParams && r.stepKey != "" {
		if obj, ok := params[r.stepKey].(map[string]any); ok {
			target = obj
		}
	}
	for k, v := range frag {
		target[k] = v
	}
	return r.fromParams(ev, params)
}

// isRPCMessage reports whether m looks like a JSON-RPC message rather than
// AOS params wrapping one.
func isRPCMessage(m map[string]any) bool { return jsonrpc.LooksLikeMessage(m) }
