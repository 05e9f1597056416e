package aos

import (
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonrpc"
)

// StepMethods lists the steps/* methods, in the order of the AOS spec.
var StepMethods = catalog.StepMethods

// A2AHookMethods lists the A2A hook methods (see catalog.A2AHookMethods). A
// request without params.payload is taken to be the A2A request itself.
var A2AHookMethods = catalog.A2AHookMethods

// methodKind says how a method's params map to an event.
type methodKind uint8

const (
	kindUnknown methodKind = iota
	kindStep
	kindProtocol
	kindA2AHook
	kindPing
)

var methodKinds = func() map[string]methodKind {
	m := map[string]methodKind{MethodMCP: kindProtocol, MethodA2A: kindProtocol, MethodPing: kindPing}
	for _, s := range StepMethods {
		m[s] = kindStep
	}
	for _, s := range A2AHookMethods {
		m[s] = kindA2AHook
	}
	return m
}()

// shape says where the event's payload sits in the request, so a modified
// payload is put back where it came from.
type shape uint8

const (
	inParams  shape = iota // params itself
	inMessage              // params.message (protocols/MCP and protocols/A2A, wrapped)
	inPayload              // params.payload (A2A hooks)
	isRequest              // the request itself (A2A hooks without a payload)
)

// isRPCMessage reports whether m looks like a JSON-RPC message rather than
// AOS params wrapping one.
func isRPCMessage(m map[string]any) bool { return jsonrpc.LooksLikeMessage(m) }

// decodeEvent validates the params of method and builds its event.
func (h *Handler) decodeEvent(c *call, method string, params map[string]any) (*warden.Event, shape, *Error) {
	ev := &warden.Event{Name: method, Surface: warden.SurfaceAOS, RequestID: c.idText()}
	raw := c.paramsRaw
	if c.params == nil {
		raw = nil
	}
	switch methodKinds[method] {
	case kindStep:
		if err := catalog.CheckStepParams(method, params); err != nil {
			return nil, 0, invalidParams(err)
		}
		ev.Payload, ev.Raw = params, raw
		return ev, inParams, nil

	case kindProtocol:
		msg, sh, field := params, inParams, "params"
		if !isRPCMessage(params) {
			m, err := catalog.RequiredObject(params, "params", "message")
			if err != nil {
				return nil, 0, invalidParams(err)
			}
			if err := catalog.CheckWrapperParams(params); err != nil {
				return nil, 0, invalidParams(err)
			}
			ev.Envelope.Context = getObj(params, "context")
			ev.Envelope.Reasoning = getStr(params, "reasoning")
			msg, sh, field, raw = m, inMessage, "params.message", c.member("message")
		}
		if err := catalog.CheckProtocolMessage(method, msg, field); err != nil {
			return nil, 0, invalidParams(err)
		}
		ev.Direction, ev.Payload, ev.Raw = catalog.MessageDirection(msg), msg, raw
		return ev, sh, nil

	case kindA2AHook:
		var msg map[string]any
		var sh shape
		if _, wrapped := params["payload"]; wrapped {
			m, err := catalog.RequiredObject(params, "params", "payload")
			if err != nil {
				return nil, 0, invalidParams(err)
			}
			if err := catalog.CheckWrapperParams(params); err != nil {
				return nil, 0, invalidParams(err)
			}
			if !isRPCMessage(m) {
				return nil, 0, (&fieldError{"params.payload", "expected an A2A JSON-RPC message (jsonrpc, method, result or error)"}).rpc()
			}
			if err := catalog.CheckProtocolMessage(MethodA2A, m, "params.payload"); err != nil {
				return nil, 0, invalidParams(err)
			}
			ev.Envelope.Context = getObj(params, "context")
			ev.Envelope.Reasoning = getStr(params, "reasoning")
			msg, sh, raw = m, inPayload, c.member("payload")
		} else {
			// The A2A request itself, sent as is (seed 004's "A2A payload").
			msg = map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
			if c.hasID {
				msg["id"] = c.id
			}
			if err := catalog.CheckA2AParams(params, "params"); err != nil {
				return nil, 0, invalidParams(err)
			}
			sh, raw = isRequest, c.body[c.start:c.end]
		}
		ev.Direction, ev.Payload, ev.Raw = catalog.MessageDirection(msg), msg, raw
		return ev, sh, nil
	}
	return nil, 0, methodNotFound(method)
}

// invalidParams is the error of params that do not fit their method's
// payload shape (checked by the catalog, as every surface's events are:
// catalog.CheckPayload).
func invalidParams(e *catalog.ShapeError) *Error { return (&fieldError{e.Field, e.Reason}).rpc() }

func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "method not found: " + method,
		Data: map[string]any{"method": method}}
}
