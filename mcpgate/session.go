package mcpgate

import (
	"errors"
	"net/http"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sealid"
)

// Sessions without sticky replicas. The Streamable-HTTP gateway
// keeps no session in memory: what a replica needs to continue a client's
// session — the upstream's own Mcp-Session-Id and the negotiated protocol
// version — is sealed (internal/sealid: AES-256-GCM, bound to the server
// name and the caller's tenant and name) into the Mcp-Session-Id the client
// gets, and opened from it on every request by whichever replica serves
// it. An id that does not open — forged, altered, truncated, sealed under
// another key, for another server, tenant or caller, or too old — is
// answered 404, which tells an MCP client to initialize a new session; it
// is never passed upstream. The upstream only ever sees its own id.

// SessionKind is the sealid kind of an MCP session id.
const SessionKind = "mcp-session"

// MaxUpstreamSessionID bounds an upstream's Mcp-Session-Id the gateway
// seals (its sealed id stays under sealid.MaxIDLen); a longer one is not
// handed on, and the session cannot continue.
const MaxUpstreamSessionID = 1024

// session is the client's session as one request carries it.
type session struct {
	sealer     *sealid.Sealer
	bind       sealid.Binding
	client     string // the sealed id the client sent ("" before initialize)
	up         string // the upstream's session id, opened from client
	version    string // the protocol version sealed in client
	initID     string // the id key of an initialize request in this POST
	proposed   string // the version that initialize request proposed
	negotiated string // the version its answer (JSON) carries
}

// randomSealer is the sealer of a gateway given none: a random key, so its
// ids open on this process only. crypto/rand does not fail on the
// platforms Go supports (it aborts the program instead), so neither does this.
func randomSealer() *sealid.Sealer {
	s, _ := sealid.New(nil, 0)
	return s
}

// openSession reads the request's Mcp-Session-Id. It answers 404 itself
// and returns false when the id does not open.
func (h *HTTP) openSession(w http.ResponseWriter, r *http.Request, up *upstream) (*session, bool) {
	p := warden.PrincipalFrom(r.Context())
	s := &session{sealer: h.opts.Sessions, bind: sealid.Binding{Kind: SessionKind, Server: up.server, Tenant: p.Tenant, Caller: p.Name}}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return s, true
	}
	f, err := s.sealer.OpenStrings(s.bind, id, 2)
	if err != nil {
		why := "unknown"
		if errors.Is(err, sealid.ErrExpired) {
			why = "expired"
		}
		// Never the id itself: it is the client's credential to the session.
		h.opts.Logf("mcp %s: %s with an %s session id; answered 404", up.server, r.Method, why)
		writeRPCError(w, http.StatusNotFound, CodeInvalidRequest, "session not found ("+why+"): initialize a new session")
		return nil, false
	}
	s.client, s.up, s.version = id, f[0], f[1]
	return s, true
}

// noteInitialize remembers the initialize request of a POST, and the
// protocol version it proposes.
func (s *session) noteInitialize(msgs []*message) {
	for _, m := range msgs {
		if m.isRequest() && m.method() == "initialize" {
			s.initID = idKey(m.m["id"])
			if p, ok := m.m["params"].(map[string]any); ok {
				s.proposed, _ = p["protocolVersion"].(string)
			}
		}
	}
}

// noteNegotiated reads the version an initialize answer settles on.
func (s *session) noteNegotiated(msg *message) {
	if s.initID == "" || msg.isRequest() || msg.isNotification() || idKey(msg.m["id"]) != s.initID {
		return
	}
	if res, ok := msg.m["result"].(map[string]any); ok {
		s.negotiated, _ = res["protocolVersion"].(string)
	}
}

// apply puts the upstream's own session id on a request to it in place of
// the client's sealed one, and the sealed protocol version when the
// client sent none. s nil: nothing.
func (s *session) apply(hdr http.Header) {
	if s == nil {
		return
	}
	hdr.Del("Mcp-Session-Id")
	if s.up != "" {
		hdr.Set("Mcp-Session-Id", s.up)
	}
	if s.version != "" && hdr.Get("Mcp-Protocol-Version") == "" {
		hdr.Set("Mcp-Protocol-Version", s.version)
	}
}

// reply sets the Mcp-Session-Id the client gets: the id it sent when the
// upstream still names the same session, else the upstream's new id sealed
// with the version negotiated (the initialize answer's when it was JSON;
// else the upstream's Mcp-Protocol-Version header; else the one proposed).
// The upstream's id never reaches the client as it is.
func (h *HTTP) reply(hdr http.Header, resp *http.Response, s *session) {
	hdr.Del("Mcp-Session-Id")
	u := resp.Header.Get("Mcp-Session-Id")
	if s == nil || u == "" {
		return
	}
	if s.client != "" && u == s.up {
		hdr.Set("Mcp-Session-Id", s.client)
		return
	}
	if len(u) > MaxUpstreamSessionID {
		h.opts.Logf("mcp %s: the upstream's session id is over %d bytes; not handed on", s.bind.Server, MaxUpstreamSessionID)
		return
	}
	ver := s.negotiated
	for _, v := range []string{resp.Header.Get("Mcp-Protocol-Version"), s.version, s.proposed} {
		if ver == "" {
			ver = v
		}
	}
	id, err := s.sealer.SealStrings(s.bind, u, ver)
	if err != nil {
		h.opts.Logf("mcp %s: sealing a session id: %v", s.bind.Server, err)
		return
	}
	hdr.Set("Mcp-Session-Id", id)
}
