package acsclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

var semver = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// unauthenticatedCodes are the errors a Guardian may leave unsigned though
// the request carried a signature: the request did not authenticate
// (-32004) or could not be read far enough to find its session key.
var unauthenticatedCodes = map[int]bool{-32700: true, -32600: true, -32602: true, -32004: true}

// VerifyResponse checks r against the request it answers (r.Request; the
// client's key and session when it is nil) and returns every problem found,
// joined:
//
//   - "jsonrpc" is "2.0" and the id echoes the request's;
//   - the signature at result.signature (error.signature for an error)
//     verifies under the request's key, key_id and session; an
//     ML-DSA-65 or SLH-DSA-128s one under Options.GuardianKeys (pq.go),
//     which, when set, make a signature required on every answer but a
//     ping's and an unauthenticated error's. It is required
//     when the request was signed, except on an error the Guardian could not
//     authenticate (-32700, -32600, -32602, -32004); an answer to an unsigned
//     request (system/ping) is checked only when it carries one;
//   - for a handshake/hello result (a ServerHello): negotiated_version is
//     X.Y.Z and request_id, when present, is the request's;
//   - for any other result: type "final", acs_version X.Y.Z, request_id the
//     request's, decision one of allow/deny/modify/ask/defer; every decision
//     but allow carries reasoning; modify carries modifications (either
//     modified_content alone, or redactions and/or parameter_overrides);
//     ask carries ask_details (an object; its approver, when present, an
//     object); defer carries defer_details with resolution_method (string),
//     resolution_timeout_ms (integer >= 0) and timeout_decision ("allow" or
//     "deny"); chain_hash, when present, is 64 lowercase hex digits;
//     reason_codes, when present, is an array of strings;
//   - for system/ping: decision allow and payload {status "ok", echo of the
//     request's echo}.
//
// An error answer is checked only for the first two points.
func (c *Client) VerifyResponse(r *Response) error {
	if r == nil {
		return errors.New("acsclient: no response")
	}
	key, keyID, sid := c.key, c.keyID, c.sessionID
	req := r.Request
	reqSigned, method := false, ""
	if req != nil {
		key, keyID = req.Key, req.KeyID
		if s := req.SessionID(); s != "" {
			sid = s
		}
		reqSigned = req.Signed()
		method = req.Method
	}
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	if v, _ := r.Msg["jsonrpc"].(string); v != "2.0" {
		add("jsonrpc is %v, want \"2.0\"", r.Msg["jsonrpc"])
	}
	if req != nil && req.ID != nil && !sameJSON(r.ID, req.ID) {
		add("id is %v, want the request's %v", r.ID, req.ID)
	}
	if r.Result != nil && r.Error != nil {
		add("the answer carries both result and error")
	}

	at := "result"
	if r.Error != nil {
		at = "error"
	}
	inner, _ := r.Msg[at].(map[string]any)
	sigObj, _ := inner["signature"].(map[string]any)
	alg, _ := sigObj["algorithm"].(string)
	_, has := inner["signature"]
	if has && SchemeOf(alg) != nil {
		if err := VerifyPublic(r.Msg, at, c.guardian); err != nil {
			errs = append(errs, err)
		}
	} else if has && len(c.guardian) > 0 {
		add("%s.signature.algorithm is %q; the client expects the Guardian's asymmetric signature", at, alg)
	} else if !has && len(c.guardian) > 0 && method != "system/ping" && !(r.Error != nil && unauthenticatedCodes[r.Error.Code]) {
		add("%s.signature is missing (the Guardian signs its answers with its own key)", at)
	} else if has {
		if key == nil {
			add("%s.signature is present but the client has no key to verify it", at)
		} else if err := Verify(r.Msg, at, key, keyID, sid); err != nil {
			errs = append(errs, err)
		}
	} else if reqSigned && !(r.Error != nil && unauthenticatedCodes[r.Error.Code]) {
		add("%s.signature is missing (the request was signed)", at)
	}
	if r.Error != nil {
		return errors.Join(errs...)
	}

	res := r.Result
	wantRID := ""
	if req != nil {
		wantRID = req.RequestID()
	}
	if method == "handshake/hello" {
		if v, _ := res["negotiated_version"].(string); !semver.MatchString(v) {
			add("result.negotiated_version is %v, want X.Y.Z", res["negotiated_version"])
		}
		if rid, ok := res["request_id"]; ok && wantRID != "" && rid != wantRID {
			add("result.request_id is %v, want the request's %s", rid, wantRID)
		}
		return errors.Join(errs...)
	}

	if res["type"] != "final" {
		add("result.type is %v, want \"final\"", res["type"])
	}
	if v, _ := res["acs_version"].(string); !semver.MatchString(v) {
		add("result.acs_version is %v, want X.Y.Z", res["acs_version"])
	}
	if rid, _ := res["request_id"].(string); rid == "" {
		add("result.request_id is missing")
	} else if wantRID != "" && rid != wantRID {
		add("result.request_id is %s, want the request's %s", rid, wantRID)
	}
	decision, _ := res["decision"].(string)
	switch decision {
	case "allow", "deny", "modify", "ask", "defer":
	default:
		add("result.decision is %v, want allow, deny, modify, ask or defer", res["decision"])
	}
	if decision != "" && decision != "allow" {
		if s, _ := res["reasoning"].(string); s == "" {
			add("result.reasoning is missing on %s", decision)
		}
	}
	switch decision {
	case "modify":
		errs = append(errs, checkModifications(res["modifications"])...)
	case "ask":
		ad, ok := res["ask_details"].(map[string]any)
		if !ok {
			add("result.ask_details is missing or not an object on ask")
		} else if ap, has := ad["approver"]; has {
			if _, ok := ap.(map[string]any); !ok {
				add("result.ask_details.approver is a %T, not an object", ap)
			}
		}
	case "defer":
		errs = append(errs, checkDefer(res["defer_details"])...)
	}
	if v, has := res["chain_hash"]; has {
		if s, _ := v.(string); !IsHash(s) {
			add("result.chain_hash %v is not 64 lowercase hex digits", v)
		}
	}
	if v, has := res["reason_codes"]; has {
		l, ok := v.([]any)
		if !ok {
			add("result.reason_codes is a %T, not an array", v)
		}
		for _, x := range l {
			if _, ok := x.(string); !ok {
				add("result.reason_codes holds %v, not a string", x)
			}
		}
	}
	if method == "system/ping" {
		if decision != "allow" {
			add("system/ping answered %q, must be allow", decision)
		}
		p, _ := res["payload"].(map[string]any)
		if p["status"] != "ok" {
			add("system/ping result.payload.status is %v, want \"ok\"", p["status"])
		}
		if rp, ok := req.Params["payload"].(map[string]any); ok {
			if echo, ok := rp["echo"]; ok && p["echo"] != echo {
				add("system/ping result.payload.echo is %v, want %v", p["echo"], echo)
			}
		}
	}
	return errors.Join(errs...)
}

func checkModifications(v any) []error {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []error{fmt.Errorf("result.modifications is missing or empty on modify")}
	}
	_, whole := m["modified_content"]
	_, red := m["redactions"]
	_, over := m["parameter_overrides"]
	switch {
	case whole && (red || over):
		return []error{fmt.Errorf("result.modifications combines modified_content with redactions or parameter_overrides (§6.3)")}
	case !whole && !red && !over:
		return []error{fmt.Errorf("result.modifications has none of modified_content, redactions, parameter_overrides")}
	}
	return nil
}

func checkDefer(v any) []error {
	d, ok := v.(map[string]any)
	if !ok {
		return []error{fmt.Errorf("result.defer_details is missing or not an object on defer")}
	}
	var errs []error
	if s, _ := d["resolution_method"].(string); s == "" {
		errs = append(errs, fmt.Errorf("result.defer_details.resolution_method is missing"))
	}
	if n, ok := d["resolution_timeout_ms"].(json.Number); !ok {
		errs = append(errs, fmt.Errorf("result.defer_details.resolution_timeout_ms is missing or not a number"))
	} else if i, err := n.Int64(); err != nil || i < 0 {
		errs = append(errs, fmt.Errorf("result.defer_details.resolution_timeout_ms %s is not an integer >= 0", n))
	}
	if s, _ := d["timeout_decision"].(string); s != "allow" && s != "deny" {
		errs = append(errs, fmt.Errorf("result.defer_details.timeout_decision is %v, want allow or deny", d["timeout_decision"]))
	}
	return errs
}
