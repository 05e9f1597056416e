package aos

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/internal/jsonappend"
	"github.com/wardenhq/warden/jsonrpc"

	"github.com/wardenhq/warden"
)

// Responses are appended to one buffer by hand: the shape is fixed, the id
// is echoed byte for byte as the request wrote it, and only a modified
// request's params go through encoding/json.

// appendPing appends the answer to ping.
func appendPing(b, id []byte, version string, now time.Time) []byte {
	b = jsonrpc.AppendHead(b, id)
	b = append(b, `"result":{"status":"connected","version":`...)
	b = appendString(b, version)
	b = append(b, `,"timestamp":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339)
	return append(b, `"}}`...)
}

// wireDecision maps an outcome's verdict to the AOS decision. The chain
// only yields allow, deny and modify; anything else fails closed.
func wireDecision(v warden.Verdict) (decision, verb string) {
	switch v {
	case warden.Allow:
		return "allow", "allowed"
	case warden.Modify:
		return "modify", "modified"
	}
	return "deny", "denied"
}

// Message returns the human-readable message of an outcome, e.g. "denied by
// policy no-external-email: external email requires approval".
func Message(o *warden.Outcome) string {
	_, msg := wireDecision(o.Verdict)
	if o.PolicyID != "" {
		msg += " by policy " + o.PolicyID
	}
	if o.Reason != "" {
		msg += ": " + o.Reason
	}
	return msg
}

// appendResult appends the success response of a decided request. With a
// modify, modifiedRequest is the whole AOS request, its params carrying the
// changed payload where the payload came from.
func appendResult(b []byte, c *call, method string, params map[string]any, sh shape, o *warden.Outcome) ([]byte, error) {
	decision, _ := wireDecision(o.Verdict)
	b = jsonrpc.AppendHead(b, c.idRaw)
	b = append(b, `"result":{"decision":"`...)
	b = append(b, decision...)
	b = append(b, `","message":`...)
	b = appendString(b, Message(o))
	if o.Reason != "" {
		b = append(b, `,"reasoning":`...)
		b = appendString(b, o.Reason)
		b = append(b, `,"reason":`...)
		b = appendString(b, o.Reason)
	}
	if len(o.ReasonCodes) > 0 {
		b = append(b, `,"reasonCode":[`...)
		for i, code := range o.ReasonCodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, code)
		}
		b = append(b, ']')
	}
	if o.PolicyID != "" {
		b = append(b, `,"policyId":`...)
		b = appendString(b, o.PolicyID)
		if o.PolicyVersion != "" {
			b = append(b, `,"policyVersion":`...)
			b = appendString(b, o.PolicyVersion)
		}
	}
	if o.RecordID != "" || o.ApprovalID != "" {
		b = append(b, `,"data":{`...)
		if o.RecordID != "" {
			b = append(b, `"traceId":`...)
			b = appendString(b, o.RecordID)
		}
		if o.ApprovalID != "" {
			if o.RecordID != "" {
				b = append(b, ',')
			}
			// The approval this step waits for (retry once it is approved),
			// or the one that let it through.
			b = append(b, `"approvalId":`...)
			b = appendString(b, o.ApprovalID)
		}
		b = append(b, '}')
	}
	if decision == "modify" {
		p, err := encodeJSON(modifiedParams(params, sh, o.Payload))
		if err != nil {
			return b, err
		}
		var id []byte
		if c.hasID {
			id = c.idRaw
		}
		b = append(b, `,"modifiedRequest":`...)
		b = jsonrpc.AppendRequest(b, id, method, p)
	}
	return append(b, "}}"...), nil
}

// modifiedParams puts a changed payload back where it came from.
func modifiedParams(params map[string]any, sh shape, payload map[string]any) map[string]any {
	if payload == nil {
		return params
	}
	switch sh {
	case inMessage, inPayload:
		key := "message"
		if sh == inPayload {
			key = "payload"
		}
		p := make(map[string]any, len(params))
		for k, v := range params {
			p[k] = v
		}
		p[key] = payload
		return p
	case isRequest:
		if p, ok := payload["params"].(map[string]any); ok {
			return p
		}
		return params
	}
	return payload
}

// encodeJSON encodes v without HTML escaping and without the trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, as encoding/json writes it
// (jsonappend.String: invalid UTF-8 becomes U+FFFD).
func appendString(b []byte, s string) []byte { return jsonappend.String(b, s) }
