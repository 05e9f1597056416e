package acs

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/wardenhq/warden/acsstate"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// profiles lists the ACS profiles (conformance.md) this Guardian can
// accept, in the spec's order. ACS-Core, ACS-Audit (request_hash on every
// ContextEntry) and ACS-Provenance (field-level provenance validated,
// strictly when the client declares it; session labels from origins) are
// always on; the others hold only when what they need is configured:
// ACS-Trace an OTLP exporter or the OCSF sink, ACS-Inspect and
// Inspect-Dynamic a store that keeps AgBOMs, ACS-Crypto a post-quantum
// signing key (acs.signing_key). docs/acs-conformance.md names the test
// that shows each.
func (h *Handler) profiles() []string {
	out := []string{"acs-core"}
	if h.opts.TraceOTel || h.opts.TraceOCSF {
		out = append(out, "acs-trace")
	}
	if h.opts.Inspect {
		out = append(out, "acs-inspect", "acs-inspect-dynamic")
	}
	out = append(out, "acs-provenance")
	if h.opts.SigningKey != nil {
		out = append(out, "acs-crypto")
	}
	return append(out, "acs-audit")
}

// mcpWildcard in a session's methods stands for every protocols/MCP/*
// method: the client declared MCP in wrapped_protocols.
const mcpWildcard = catalog.ACSMCPPrefix + "*"

// evaluates reports whether warden evaluates method (as the client names
// it, a wrapped:mcp-… form included).
func evaluates(method string) bool {
	if method == MethodHello {
		return false // not a hook: nothing to evaluate
	}
	_, ok := resolveMethod(method)
	return ok
}

// hello answers handshake/hello: the ClientHello checked, the session
// stored (or, for a session that exists, checked to be the same agent,
// key and tenant), and a ServerHello stating what warden does.
func (h *Handler) hello(ctx context.Context, r *request, transport string) (map[string]any, *Error) {
	p := r.payload
	version := ""
	for _, v := range strings_(p["acs_versions_supported"]) {
		if v == Version || (version == "" && semverRE.MatchString(v) && sameMajor(v)) {
			version = v
		}
	}
	if version == "" {
		return nil, errf(CodeUnsupportedVersion, "params.payload.acs_versions_supported",
			"no version warden speaks (%s) is listed", Version).with("supported_versions", []string{Version})
	}
	if h.opts.RequireProvenance && p["provenance_producer"] == "none" {
		return nil, errf(CodeProvenanceRequired, "params.payload.provenance_producer",
			`warden's policy requires provenance (acs.require_provenance), and the client declared "none"`)
	}
	profiles := strings_(p["profiles_supported"])
	if slices.Contains(profiles, ProfileProvenance) && p["provenance_producer"] != "deterministic" {
		return nil, errf(CodeInvalidParams, "params.payload.provenance_producer",
			`the client declares %s, which needs provenance_producer "deterministic"`, ProfileProvenance)
	}
	if !slices.Contains(strings_(p["transports_supported"]), transport) {
		return nil, errf(CodeSessionRefused, "params.payload.transports_supported",
			"this request came over %s, which the client does not list", transport)
	}
	methods := evaluatedMethods(p)
	tenant := warden.PrincipalFrom(ctx).Tenant
	keyID := ""
	if r.sig != nil {
		keyID = r.sig.KeyID
	}
	old, err := h.opts.Sessions.ACSSession(ctx, r.sessionID)
	switch {
	case err == nil:
		if e := sameParty(old, r, tenant, keyID); e != nil {
			return nil, e
		}
	case !errors.Is(err, acsstate.ErrNoSession):
		return nil, errf(CodeInternal, "", "reading the session: %v", err)
	}
	if e := h.remember(ctx, r); e != nil {
		return nil, e
	}
	now := h.opts.Now()
	s := &acsstate.Session{ID: r.sessionID, AgentID: r.agentID, Tenant: tenant, KeyID: keyID, Version: version,
		Methods: methods, Profiles: profiles, Hello: now, LastSeen: now}
	if err := h.opts.Sessions.PutACSSession(ctx, s); err != nil {
		return nil, errf(CodeInternal, "", "storing the session: %v", err)
	}
	return h.serverHello(r, version, methods, transport, profiles), nil
}

// sameParty refuses a handshake or step of a known session from another
// agent, tenant or key, or after the session ended.
func sameParty(s *acsstate.Session, r *request, tenant, keyID string) *Error {
	switch {
	case s.Ended:
		return errf(CodeSessionRefused, "params.metadata.session_id", "session %s has ended (steps/sessionEnd); start a new session", clip(s.ID))
	case s.AgentID != r.agentID:
		return errf(CodeSessionRefused, "params.metadata.agent_id", "session %s belongs to another agent", clip(s.ID))
	case s.Tenant != tenant:
		return errf(CodeSessionRefused, "params.metadata.session_id", "session %s belongs to another tenant", clip(s.ID))
	case s.KeyID != keyID:
		return errf(CodeSignatureInvalid, "params.signature.key_id", "session %s is bound to the key it was negotiated with; sign with that key", clip(s.ID))
	}
	return nil
}

// evaluatedMethods is the part of the client's methods_implemented that
// warden evaluates, plus every wrapped MCP method when wrapped_protocols
// declares MCP; sorted, without duplicates.
func evaluatedMethods(p map[string]any) []string {
	seen := map[string]bool{}
	for _, m := range strings_(p["methods_implemented"]) {
		if evaluates(m) {
			seen[m] = true
		}
	}
	if ws, ok := p["wrapped_protocols"].([]any); ok {
		for _, w := range ws {
			if m, _ := w.(map[string]any); m != nil && m["protocol"] == "MCP" {
				seen[mcpWildcard] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// negotiated reports whether the session's handshake covers method.
func negotiated(s *acsstate.Session, method string) bool {
	for _, m := range s.Methods {
		if m == method || (m == mcpWildcard && strings.HasPrefix(method, catalog.ACSMCPPrefix)) {
			return true
		}
	}
	return false
}

// serverHello is the handshake's result: an ACS result (type final,
// decision allow, so it validates as response-envelope.json's AcsResult)
// carrying the ServerHello of handshake.json.
func (h *Handler) serverHello(r *request, version string, methods []string, transport string, profiles []string) map[string]any {
	evaluated := make([]string, 0, len(methods))
	for _, m := range methods {
		if m == mcpWildcard {
			for _, x := range catalog.ACSMCPMethods {
				evaluated = append(evaluated, catalog.ACSMCPPrefix+x)
			}
			continue
		}
		evaluated = append(evaluated, m)
	}
	algs := h.signer.algorithms()
	approvers := []string{}
	if h.opts.Approvals {
		approvers = append(approvers, "human")
	}
	offered := h.profiles()
	accepted := []string{}
	for _, p := range profiles {
		if slices.Contains(offered, p) && !slices.Contains(accepted, p) {
			accepted = append(accepted, p)
		}
	}
	return map[string]any{
		"type": "final", "acs_version": version, "request_id": r.requestID, "decision": "allow",
		"reasoning":          "session negotiated",
		"negotiated_version": version,
		"methods_evaluated":  evaluated,
		"selected_transport": transport,
		"timeout_config":     map[string]any{"default_ms": h.opts.DecisionTimeout.Milliseconds()},
		// warden fails closed: a step without a usable answer is refused.
		"on_decision_failure":            "deny",
		"skew_window_ms":                 h.opts.SkewWindow.Milliseconds(),
		"signature_algorithms_supported": algs,
		"signatures_required":            h.opts.RequireSignatures,
		"approver_types_supported":       approvers,
		"policy_requires_provenance":     h.opts.RequireProvenance,
		// The AgBOM serializations GET /api/agbom and `warden agbom` render
		// (docs/agbom.md); "canonical" is format=acs.
		"agbom_serializations_supported": []string{"canonical", "cyclonedx-1.6", "spdx-3.0"},
		"profiles_accepted":              accepted,
		"guardian":                       map[string]any{"name": "warden", "version": h.opts.Version},
		// Where this Guardian's decisions go as Trace events. No collector
		// endpoint is offered to the agent: warden's may be internal.
		"trace_emission": map[string]any{
			"otel_enabled": h.opts.TraceOTel, "ocsf_enabled": h.opts.TraceOCSF,
		},
	}
}

// strings_ returns the string members of a JSON array.
func strings_(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
