// Package mcpgate is warden's MCP gateway: a stdio relay between an MCP client
// and the server process it would have started (`warden mcp stdio -- CMD`),
// and a Streamable-HTTP proxy to configured upstream servers (/mcp/{server}).
// Every JSON-RPC message, in both directions, is decided as the event
// protocols/MCP (surface mcp) and recorded by the Decider; a tools/call
// request and its result also carry the tool view, so tool policies apply
// unchanged. It is named mcpgate, not mcp, so it never shadows the go-sdk.
package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
)

// EventName is the event every MCP message is decided as.
const EventName = "protocols/MCP"

// JSON-RPC error codes the gateways answer with.
const (
	CodeParseError     = jsonrpc.CodeParseError     // a line or body that is not JSON
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // JSON but not a JSON-RPC message, ambiguous, or over the size limit
	CodeInternal       = jsonrpc.CodeInternal
	CodeDenied         = jsonrpc.CodeDenied   // a policy or hook denied the message (-31900)
	CodeUpstream       = jsonrpc.CodeUpstream // the server is not configured, unreachable, timed out, crashed or answered garbage (-31901)
)

// DefaultMaxMessage bounds one message: a stdio line, an HTTP body, an SSE event.
const DefaultMaxMessage = 4 << 20

// maxPending bounds the requests a gateway remembers while they are in
// flight (to correlate results with their tool and to answer them if the
// server goes away); past it the oldest are forgotten.
const maxPending = 10000

// message is one JSON-RPC message as the gateway sees it.
type message struct {
	raw []byte          // as received (forwarded unchanged when allowed)
	m   map[string]any  // decoded
	id  json.RawMessage // the id as sent (nil: none), echoed byte for byte
}

func (msg *message) method() string { s, _ := msg.m["method"].(string); return s }
func (msg *message) hasID() bool {
	v, ok := msg.m["id"]
	return ok && v != nil
}
func (msg *message) isRequest() bool      { _, ok := msg.m["method"]; return ok && msg.hasID() }
func (msg *message) isNotification() bool { _, ok := msg.m["method"]; return ok && !msg.hasID() }

// isRPC reports whether m is a JSON-RPC message (request, notification or
// response).
func isRPC(m map[string]any) bool { return jsonrpc.Classify(m) != jsonrpc.KindInvalid }

// idKey is the correlation key of a JSON-RPC id ("" for none).
func idKey(v any) string { k, _ := jsonrpc.IDKey(v); return k }

// idText is an id as text, for the trace.
func idText(v any) string { return jsonrpc.IDText(v) }

// bad is a member of a line or body that is not forwarded: not a JSON-RPC
// message, or ambiguous JSON (jsonstrict). id is its id as sent when one
// can be read.
type bad struct {
	id  json.RawMessage
	why string // the error message to answer with
}

const notRPC = "invalid request: not a JSON-RPC 2.0 message"

// parse splits a line or body into messages: one object, or the members of a
// batch. A member that is not a JSON-RPC message, or whose JSON different
// readers would read differently (a duplicate key, keys differing only in
// case, invalid UTF-8: jsonstrict), is returned in bads, with its id when it
// has one; it is never forwarded, so what is forwarded is what the policies
// saw.
//
// A batch of more than maxBatch entries fails whole with
// *jsonrpc.BatchLimitError before any entry is decoded.
func parse(data []byte, maxBatch int) (msgs []*message, bads []bad, isBatch bool, err error) {
	data = bytes.TrimSpace(data)
	items, isBatch, err := jsonrpc.Split(data, maxBatch)
	switch {
	case err != nil:
		return nil, nil, isBatch, err
	case !isBatch:
		if !json.Valid(data) {
			var m map[string]any
			return nil, nil, false, json.Unmarshal(data, &m)
		}
		msg, b := parseOne(data)
		if msg == nil {
			return nil, []bad{b}, false, nil
		}
		return []*message{msg}, nil, false, nil
	case len(items) == 0:
		// An empty batch is one invalid request, answered alone.
		return nil, []bad{{nil, "invalid request: empty batch"}}, false, nil
	}
	for _, it := range items {
		msg, b := parseOne(it)
		if msg == nil {
			bads = append(bads, b)
			continue
		}
		msgs = append(msgs, msg)
	}
	return msgs, bads, true, nil
}

// parseOne reads one batch member or message (valid JSON).
func parseOne(raw json.RawMessage) (*message, bad) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, bad{nil, notRPC}
	}
	env, _ := jsonrpc.ReadEnvelope(raw)
	if err := jsonstrict.Check(raw); err != nil {
		var id json.RawMessage
		if idText(m["id"]) != "" {
			id = env.ID
		}
		return nil, bad{id, "invalid request: " + err.Error()}
	}
	if !isRPC(m) {
		return nil, bad{env.ID, notRPC}
	}
	return &message{raw: raw, m: m, id: env.ID}, bad{}
}

// errorMessage encodes a JSON-RPC error response to id (as sent; nil:
// null).
func errorMessage(id json.RawMessage, code int, msg string) []byte {
	return jsonrpc.ErrorResponse(id, code, msg, nil)
}

// deniedMessage is the error text of a denial.
func deniedMessage(reason string) string {
	if reason == "" {
		reason = "policy"
	}
	return "denied by warden: " + reason
}

// verdict is what the gateway does with one message.
type verdict struct {
	deny   bool
	reason string
	out    []byte // the message to forward (raw when unchanged)
	// Of a deny, for its error.data (refusal.go): the trace record, the
	// deciding policy and the reason codes.
	recordID, policyID string
	codes              []string
	// covers are the asks an approver approved for this message (a
	// request's approval covers its answer too: see warden.Cover).
	covers []warden.Cover
}

// gate holds what both gateways share: the decision core, the tool server
// name and the batch limit.
type gate struct {
	dec      warden.Core
	server   string
	maxBatch int
	pins     *Pins  // nil: tools are not pinned
	endpoint string // the upstream's URL, for the AgBOM ("" for stdio)
}

// batchLimit is max, or jsonrpc.DefaultMaxBatch when max <= 0.
func batchLimit(max int) int {
	if max <= 0 {
		return jsonrpc.DefaultMaxBatch
	}
	return max
}

// decide runs one message through the chain and settles it: an asked
// message waits for its approval here (see held for the stdio gateway,
// which must not wait inline).
func (g *gate) decide(ctx context.Context, msg *message, dir, session string, tool *warden.Tool) verdict {
	out := g.outcome(ctx, msg, dir, session, tool)
	return g.verdictOf(msg, approval.Settle(ctx, g.dec, out))
}

// outcome runs one message through the chain. tool is the tool view of the
// request a response answers (nil when none or not a tools/call).
func (g *gate) outcome(ctx context.Context, msg *message, dir, session string, tool *warden.Tool) warden.Outcome {
	return g.outcomeChanges(ctx, msg, dir, session, answered{tool: tool}, nil)
}

// answered is what a response answers: the tool view of its request (nil
// when none or not a tools/call) and the asks an approver approved for the
// request (nil when none).
type answered struct {
	tool   *warden.Tool
	covers []warden.Cover
}

// decideList is decide for a message that may answer a tools/list request
// (l non-nil): the answer is compared with the server's pins first, its
// changes go into the event, and once it is settled the pins and the
// AgBOM follow (see Pins).
func (g *gate) decideList(ctx context.Context, msg *message, dir, session string, req answered, l *listing) verdict {
	lc := g.pins.check(ctx, g.server, msg, l)
	out := g.outcomeChanges(ctx, msg, dir, session, req, lc.toolChanges())
	v := g.verdictOf(msg, approval.Settle(ctx, g.dec, out))
	g.pins.settled(ctx, lc, g.endpoint, !v.deny)
	return v
}

// outcomeChanges is outcome with the tool changes of a tools/list answer
// in the envelope.
func (g *gate) outcomeChanges(ctx context.Context, msg *message, dir, session string, req answered, changes []warden.ToolChange) warden.Outcome {
	ev := &warden.Event{
		Name: EventName, Surface: warden.SurfaceMCP, Direction: dir,
		RequestID: idText(msg.m["id"]), Payload: msg.m, Raw: msg.raw,
		Envelope: warden.Envelope{SessionID: session, Server: g.server, Answers: req.tool, ToolChanges: changes,
			Approved: req.covers},
	}
	out, _ := g.dec.Decide(ctx, ev) // a trace failure is already a deny
	return out
}

// held reports whether out waits for an approval.
func held(out warden.Outcome) bool { return out.Verdict.Holds() && out.ApprovalID != "" }

// verdictOf maps a settled outcome to what the gateway does with msg.
func (g *gate) verdictOf(msg *message, out warden.Outcome) verdict {
	switch out.Verdict {
	case warden.Deny:
		return verdict{deny: true, reason: out.Reason, recordID: out.RecordID, policyID: out.PolicyID, codes: out.ReasonCodes}
	case warden.Modify:
		if out.Payload != nil {
			b, err := json.Marshal(out.Payload)
			if err != nil {
				return verdict{deny: true, reason: fmt.Sprintf("modified message does not encode: %v", err), recordID: out.RecordID}
			}
			return verdict{out: b, covers: out.Covers()}
		}
	}
	return verdict{out: msg.raw, covers: out.Covers()}
}

// toolOf returns the tool view of a tools/call request, with the server name.
func (g *gate) toolOf(msg *message) *warden.Tool {
	t, ok := catalog.MCPToolCall(msg.m)
	if !ok {
		return nil
	}
	t.Server = g.server
	return &t
}

// pending remembers requests in flight in one direction (a bounded
// jsonrpc.Cache by id): their raw id, to answer them if the peer goes away,
// and, for tools/call, the tool view.
type pending struct {
	c *jsonrpc.Cache[pendingReq]
}

type pendingReq struct {
	id     json.RawMessage // as sent
	tool   *warden.Tool
	list   *listing       // a tools/list request (pinning)
	covers []warden.Cover // the asks an approver approved for the request
}

func newPending() *pending { return &pending{c: jsonrpc.NewCache[pendingReq](maxPending)} }

// put remembers the request msg.
func (p *pending) put(msg *message, tool *warden.Tool, list *listing, covers []warden.Cover) {
	p.c.Put(idKey(msg.m["id"]), pendingReq{id: msg.id, tool: tool, list: list, covers: covers})
}

// take removes and returns the request answered by id (decoded).
func (p *pending) take(id any) (pendingReq, bool) { return p.c.Take(idKey(id)) }

// takeRaw is take for an id as sent.
func (p *pending) takeRaw(id json.RawMessage) (pendingReq, bool) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return pendingReq{}, false
	}
	return p.take(v)
}

// drain removes and returns every request still in flight, oldest first.
func (p *pending) drain() []pendingReq { return p.c.Drain() }

// headIDPattern finds a top-level-looking "id" member in the head of a
// message too large to decode.
var headIDPattern = regexp.MustCompile(`^\s*\{(?:[^{}\[\]]*?,)?\s*"id"\s*:\s*(-?[0-9.eE+-]+|"(?:[^"\\]|\\.)*")`)

// headID returns the JSON-RPC id (as sent) found at the start of an
// over-long message.
func headID(head []byte) (json.RawMessage, bool) {
	m := headIDPattern.FindSubmatch(head)
	if m == nil {
		return nil, false
	}
	var id any
	if err := json.Unmarshal(m[1], &id); err != nil {
		return nil, false
	}
	return bytes.Clone(m[1]), true
}
