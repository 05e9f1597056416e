package acs

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
)

// Version is the ACS wire version warden speaks (acs_version).
const Version = "0.1.0"

// Methods outside steps/*, protocols/MCP/* and agbom/*.
const (
	MethodHello = "handshake/hello"
	MethodPing  = "system/ping"
)

// AlgHMAC is the ACS-Core signature algorithm.
const AlgHMAC = "HMAC-SHA256"

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	semverRE  = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	hexHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// wrappedMCP is the explicit-version form of a wrapped MCP method:
	// wrapped:mcp-2025-06-18/tools/call.
	wrappedMCP = regexp.MustCompile(`^wrapped:mcp-([0-9A-Za-z.\-]+)/(.+)$`)
)

// maxIDBytes bounds session_id, agent_id, turn_id and key_id.
const maxIDBytes = 256

// signature is params.signature.
type signature struct {
	Algorithm, Value, KeyID string
}

// request is one decoded, validated ACS request.
type request struct {
	idRaw  json.RawMessage // the JSON-RPC id as sent (echoed exactly)
	method string          // as sent
	event  string          // the catalog event (wrapped:mcp-…/m → protocols/MCP/m)
	msg    map[string]any  // the whole message (numbers as json.Number), for the signature
	params map[string]any

	version   string
	requestID string
	timestamp time.Time
	nonce     string
	tenantID  string
	metadata  map[string]any
	agentID   string
	sessionID string
	turnID    string
	// clientChain is metadata.session_state.chain_hash, the head the
	// client believes ("" when not sent).
	clientChain string
	payload     map[string]any
	payloadRaw  []byte
	sig         *signature
}

// decodeMessage decodes one JSON-RPC message (already checked by
// jsonstrict) and validates the JSON-RPC layer: jsonrpc, id, method,
// params. The id is returned even when a later member is wrong, so the
// error answers it.
func decodeMessage(raw []byte) (*request, *Error) {
	// The members the JSON-RPC layer needs, found in one pass over the
	// bytes (jsonrpc.ReadEnvelope) rather than by decoding the message
	// into raw members first (a copy of the whole body). JSON null is an
	// object without members, as encoding/json reads it.
	env, object := jsonrpc.ReadEnvelope(raw)
	if !object && firstByte(raw) != 'n' {
		return nil, errf(CodeInvalidRequest, "", "a request must be a JSON object")
	}
	r := &request{}
	switch jsonrpc.KindOfID(env.ID) {
	case jsonrpc.StringID, jsonrpc.NumberID:
		r.idRaw = bytes.Clone(env.ID)
	case jsonrpc.NoID:
	default:
		return nil, errf(CodeInvalidRequest, "id", "must be a string or a number")
	}
	if !env.VersionOK() {
		return r, errf(CodeInvalidRequest, "jsonrpc", `must be "2.0"`)
	}
	if r.idRaw == nil {
		return r, errf(CodeInvalidRequest, "id", "required: ACS v0.1.0 has no notifications")
	}
	if env.Method == nil || json.Unmarshal(env.Method, &r.method) != nil || r.method == "" {
		return r, errf(CodeInvalidRequest, "method", "required, a non-empty string")
	}
	if firstByte(env.Params) != '{' {
		return r, errf(CodeInvalidParams, "params", "required, an object (the ACS envelope)")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&r.msg); err != nil {
		return r, errf(CodeInvalidRequest, "", "%v", err)
	}
	r.params, _ = r.msg["params"].(map[string]any)
	jsonstrict.Members(env.Params, func(k string, v []byte) bool {
		if k == "payload" {
			r.payloadRaw = bytes.Clone(v) // the trace and async hooks keep it
			return false
		}
		return true
	})
	return r, nil
}

// errorMessage is the error answer e to id (nil: null), as an object the
// signature is added to before it is encoded.
func errorMessage(id json.RawMessage, e *Error) map[string]any {
	return jsonrpc.ErrorObject(id, e.wire())
}

// encode encodes an answer; one that does not encode is answered with an
// internal error.
func encode(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(errorMessage(nil, errf(CodeInternal, "", "encoding the answer: %v", err)))
	}
	return b
}

// resolveMethod maps the method to its catalog event; false when ACS
// v0.1.0 (as warden implements it) has no such method.
func resolveMethod(m string) (string, bool) {
	switch {
	case m == MethodHello || m == MethodPing:
		return m, true
	case strings.HasPrefix(m, "steps/"):
		for _, h := range catalog.ACSHooks {
			if h == m {
				return m, true
			}
		}
	case strings.HasPrefix(m, catalog.ACSMCPPrefix):
		return m, isMCPMethod(strings.TrimPrefix(m, catalog.ACSMCPPrefix))
	case m == catalog.MethodAgBOMSnapshot || m == catalog.MethodAgBOMChanged:
		return m, true
	default:
		if g := wrappedMCP.FindStringSubmatch(m); g != nil && isMCPMethod(g[2]) {
			return catalog.ACSMCPPrefix + g[2], true
		}
	}
	return "", false
}

func isMCPMethod(m string) bool {
	for _, x := range catalog.ACSMCPMethods {
		if x == m {
			return true
		}
	}
	return false
}

// checkEnvelope validates params: the members request-envelope.json
// defines, with the ACS-Core rules on them. Unknown members are ignored.
func (r *request) checkEnvelope() *Error {
	p := r.params
	var ok bool
	if r.version, ok = p["acs_version"].(string); !ok {
		return errf(CodeInvalidParams, "params.acs_version", "required, a version such as %q", Version)
	}
	if !semverRE.MatchString(r.version) {
		return errf(CodeInvalidParams, "params.acs_version", "%q is not a version X.Y.Z", r.version)
	}
	if !sameMajor(r.version) {
		return errf(CodeUnsupportedVersion, "params.acs_version", "version %s is not supported (warden speaks %s)", r.version, Version).
			with("supported_versions", []string{Version})
	}
	if r.requestID, ok = p["request_id"].(string); !ok {
		return errf(CodeInvalidParams, "params.request_id", "required, a UUID")
	}
	if !uuidRE.MatchString(r.requestID) {
		return errf(CodeInvalidParams, "params.request_id", "%q is not a UUID", clip(r.requestID))
	}
	ts, ok := p["timestamp"].(string)
	if !ok {
		return errf(CodeInvalidParams, "params.timestamp", "required, an RFC 3339 date-time")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return errf(CodeInvalidParams, "params.timestamp", "%q is not an RFC 3339 date-time", clip(ts))
	}
	r.timestamp = t
	if n, has := p["nonce"]; has {
		s, ok := n.(string)
		if !ok || len(s) < 16 || len(s) > 64 {
			return errf(CodeInvalidParams, "params.nonce", "a string of 16 to 64 characters")
		}
		r.nonce = s
	}
	if t, has := p["tenant_id"]; has {
		if r.tenantID, ok = t.(string); !ok {
			return errf(CodeInvalidParams, "params.tenant_id", "must be a string")
		}
	}
	if r.metadata, ok = p["metadata"].(map[string]any); !ok {
		return errf(CodeInvalidParams, "params.metadata", "required, an object with agent_id and session_id")
	}
	if r.agentID, ok = r.metadata["agent_id"].(string); !ok || r.agentID == "" || len(r.agentID) > maxIDBytes {
		return errf(CodeInvalidParams, "params.metadata.agent_id", "required, a string of 1 to %d bytes", maxIDBytes)
	}
	if r.sessionID, ok = r.metadata["session_id"].(string); !ok || r.sessionID == "" || len(r.sessionID) > maxIDBytes {
		return errf(CodeInvalidParams, "params.metadata.session_id", "required, a string of 1 to %d bytes (a UUID)", maxIDBytes)
	}
	if t, has := r.metadata["turn_id"]; has {
		if r.turnID, ok = t.(string); !ok || len(r.turnID) > maxIDBytes {
			return errf(CodeInvalidParams, "params.metadata.turn_id", "must be a string of at most %d bytes", maxIDBytes)
		}
	}
	if ss, has := r.metadata["session_state"]; has {
		m, ok := ss.(map[string]any)
		if !ok {
			return errf(CodeInvalidParams, "params.metadata.session_state", "must be an object")
		}
		if c, has := m["chain_hash"]; has {
			s, ok := c.(string)
			if !ok || !hexHashRE.MatchString(s) {
				return errf(CodeInvalidParams, "params.metadata.session_state.chain_hash", "must be 64 lowercase hex digits")
			}
			r.clientChain = s
		}
	}
	if r.payload, ok = p["payload"].(map[string]any); !ok {
		return errf(CodeInvalidParams, "params.payload", "required, an object")
	}
	if s, has := p["signature"]; has {
		m, ok := s.(map[string]any)
		if !ok {
			return errf(CodeSignatureInvalid, "params.signature", "must be an object {algorithm, value, key_id}")
		}
		sig := &signature{}
		for k, dst := range map[string]*string{"algorithm": &sig.Algorithm, "value": &sig.Value, "key_id": &sig.KeyID} {
			if *dst, ok = m[k].(string); !ok || *dst == "" {
				return errf(CodeSignatureInvalid, "params.signature."+k, "required, a non-empty string")
			}
		}
		if len(sig.KeyID) > maxIDBytes {
			return errf(CodeSignatureInvalid, "params.signature.key_id", "longer than %d bytes", maxIDBytes)
		}
		r.sig = sig
	}
	return nil
}

// sameMajor reports whether v (X.Y.Z) has warden's major version; for a
// 0.x version, the minor version too (semver: 0.y releases may break).
func sameMajor(v string) bool {
	maj, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	wmaj, wrest, _ := strings.Cut(Version, ".")
	wminor, _, _ := strings.Cut(wrest, ".")
	return trimZeros(maj) == wmaj && (wmaj != "0" || trimZeros(minor) == wminor)
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
