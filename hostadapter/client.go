package hostadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/acsclient"
)

// acsVersion is the ACS wire version the adapter speaks.
const acsVersion = "0.1.0"

// maxAnswer bounds a Guardian's answer read over HTTP: 8 MiB, the ACS
// endpoint's own default response limit.
const maxAnswer = 8 << 20

// The ACS error codes the client acts on.
const (
	codeNotNegotiated = -32003 // CAPABILITY_NOT_NEGOTIATED: handshake first
)

// Transport carries one ACS JSON-RPC body to the Guardian and returns its
// answer.
type Transport interface {
	RoundTrip(ctx context.Context, body []byte) ([]byte, error)
	// Name is the transport as a ClientHello lists it: http, https, stdio.
	Name() string
}

// HandlerFunc is an in-process transport: the ACS Guardian's Handle
// (acs.Handler.Handle with transport "stdio", the in-process channel).
type HandlerFunc func(ctx context.Context, body []byte) []byte

// RoundTrip calls f.
func (f HandlerFunc) RoundTrip(ctx context.Context, body []byte) ([]byte, error) {
	return f(ctx, body), nil
}

// Name is "stdio": in-process, no network.
func (HandlerFunc) Name() string { return "stdio" }

// HTTP is the transport to a running warden's POST /acs.
type HTTP struct {
	URL    string       // e.g. http://127.0.0.1:8787/acs
	Token  string       // sent as a bearer token when set (scope decide)
	Client *http.Client // nil: a client whose timeout is the context's
}

// Name is http or https, from the URL.
func (t *HTTP) Name() string {
	if strings.HasPrefix(strings.ToLower(t.URL), "https:") {
		return "https"
	}
	return "http"
}

// RoundTrip POSTs body; a non-2xx answer without a JSON-RPC body is an
// error naming the status.
func (t *HTTP) RoundTrip(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	c := t.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxAnswer {
		return nil, fmt.Errorf("the answer exceeds %d bytes", maxAnswer)
	}
	if resp.StatusCode/100 != 2 {
		if bytes.Contains(b, []byte(`"jsonrpc"`)) {
			return b, nil
		}
		return nil, fmt.Errorf("%s answered %s", t.URL, resp.Status)
	}
	return b, nil
}

// Client is the adapter's ACS Observed-Agent side: it sends each step to
// the Guardian as an ACS request (signed when it has a key), negotiating
// the host session with handshake/hello the first time the Guardian does
// not know it, and reads the decision. The same client serves the
// in-process Guardian and a running warden, so both decide the same
// request the same way.
type Client struct {
	T       Transport
	AgentID string // metadata.agent_id; "" means the host's name
	KeyID   string // names Key in the signature
	Key     []byte // HMAC input keying material; nil sends unsigned requests
	Now     func() time.Time
}

// Check sends st and returns the Guardian's answer.
func (c *Client) Check(ctx context.Context, st *Step) (Answer, error) {
	res, err := c.call(ctx, st, st.Method, st.Payload)
	var re *rpcError
	if errors.As(err, &re) && re.Code == codeNotNegotiated {
		hello := map[string]any{
			"acs_versions_supported": []any{acsVersion},
			"methods_implemented":    toAny(adapterMethods),
			"transports_supported":   []any{c.T.Name()},
			"provenance_producer":    "none",
		}
		if _, err := c.call(ctx, st, "handshake/hello", hello); err != nil {
			return Answer{}, fmt.Errorf("handshake/hello: %w", err)
		}
		res, err = c.call(ctx, st, st.Method, st.Payload)
	}
	if err != nil {
		return Answer{}, err
	}
	return answerOf(res, st.Payload)
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int
	Message string
}

func (e *rpcError) Error() string { return fmt.Sprintf("ACS error %d: %s", e.Code, e.Message) }

// call sends one request and returns its result object.
func (c *Client) call(ctx context.Context, st *Step, method string, payload map[string]any) (map[string]any, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	agent := c.AgentID
	if agent == "" {
		agent = st.Host
	}
	md := map[string]any{"agent_id": agent, "session_id": st.SessionID}
	for k, v := range st.Metadata {
		md[k] = v
	}
	if st.TurnID != "" {
		md["turn_id"] = st.TurnID
	}
	id := uuid.NewString()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{
		"acs_version": acsVersion, "request_id": uuid.NewString(),
		"timestamp": now().UTC().Format(time.RFC3339Nano), "metadata": md, "payload": payload,
	}}
	if c.Key != nil {
		if err := acsclient.Sign(msg, "params", c.Key, c.KeyID, st.SessionID); err != nil {
			return nil, fmt.Errorf("signing the request: %w", err)
		}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	reply, err := c.T.RoundTrip(ctx, body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply, &resp); err != nil {
		return nil, fmt.Errorf("the Guardian's answer is not a JSON-RPC response: %v", err)
	}
	if resp.Error != nil {
		return nil, &rpcError{Code: resp.Error.Code, Message: resp.Error.Message}
	}
	if resp.ID != id {
		return nil, fmt.Errorf("the Guardian answered request %v, not %s", resp.ID, id)
	}
	if c.Key != nil {
		full, err := acsclient.DecodeObject(reply)
		if err != nil {
			return nil, err
		}
		if err := acsclient.Verify(full, "result", c.Key, c.KeyID, st.SessionID); err != nil {
			return nil, fmt.Errorf("the Guardian's answer does not verify: %v", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(resp.Result))
	dec.UseNumber()
	var res map[string]any
	if err := dec.Decode(&res); err != nil || res == nil {
		return nil, errors.New("the Guardian's answer has no result object")
	}
	return res, nil
}

// answerOf reads an ACS result: the decision, its reasoning, the
// approval an ask opened, and with modify the payload the modifications
// make of the one sent.
func answerOf(res map[string]any, sent map[string]any) (Answer, error) {
	a := Answer{}
	a.Decision, _ = res["decision"].(string)
	a.Reason, _ = res["reasoning"].(string)
	if ad, ok := res["ask_details"].(map[string]any); ok {
		a.ApprovalID, _ = ad["approval_id"].(string)
	}
	if dd, ok := res["defer_details"].(map[string]any); ok {
		a.ApprovalID, _ = dd["approval_id"].(string)
	}
	a.Explicit = explicit(res, a.Decision)
	switch a.Decision {
	case Allow, Deny, Ask, Defer:
	case Modify:
		mods, ok := res["modifications"].(map[string]any)
		if !ok {
			return Answer{}, errors.New("a modify without modifications")
		}
		p, err := applyModifications(sent, mods)
		if err != nil {
			return Answer{}, fmt.Errorf("applying the Guardian's modifications: %w", err)
		}
		a.Payload = p
	default:
		return Answer{}, fmt.Errorf("the Guardian answered the unknown decision %q", a.Decision)
	}
	return a, nil
}

// explicit reports whether a policy gave the decision answered: not when
// the Guardian's reason_codes name the default decision (warden's
// default_decision: no policy matched), nor when warden's policy_data
// says the policies decided something other than what was answered (a
// modify that changed nothing, answered allow). Both are fields of the
// ACS result, so the in-process Guardian and POST /acs read alike.
func explicit(res map[string]any, decision string) bool {
	codes, _ := res["reason_codes"].([]any)
	for _, c := range codes {
		if c == warden.CodeDefault {
			return false
		}
	}
	pd, _ := res["policy_data"].(map[string]any)
	w, _ := pd["warden"].(map[string]any)
	if d, has := w["decided"]; has && d != decision {
		return false
	}
	return true
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
